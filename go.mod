module github.com/robotsenforce/caddy-robots-enforce

go 1.26.8
