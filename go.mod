module github.com/robotsenforce/caddy-robots-enforce

go 1.26

require (
	github.com/mssola/useragent v1.0.0
	github.com/temoto/robotstxt v1.1.2
)
