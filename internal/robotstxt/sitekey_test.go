package robotstxt

import (
	"strings"
	"testing"
)

// RFC 9309 §2.3: a robots.txt belongs to a scheme, host and port. The
// spellings a client may choose for one site are one key.
func TestSiteKey(t *testing.T) {
	tests := []struct {
		scheme, host, localPort string
		want                    string
		ok                      bool
	}{
		{"https", "example.com", "443", "https://example.com", true},
		{"https", "Example.COM", "443", "https://example.com", true},
		{"https", "example.com.", "443", "https://example.com", true},
		{"https", "example.com:443", "443", "https://example.com", true},
		{"https", "example.com:0443", "443", "https://example.com", true},
		{"http", "example.com:80", "80", "http://example.com", true},
		// Ports the listener does not have reach the same site.
		{"https", "victim.test:1", "443", "https://victim.test", true},
		{"https", "victim.test:0009301", "443", "https://victim.test", true},
		{"https", "victim.test:abc", "443", "https://victim.test", true},
		{"https", "victim.test:", "443", "https://victim.test", true},
		{"https", "victim.test:99999999999999999999", "443", "https://victim.test", true},
		{"https", "VICTIM.test.:8443", "443", "https://victim.test", true},
		// The listener's own port, when not the default, is kept; a Host
		// that leaves it out keeps none (see SiteHost).
		{"http", "localhost:8081", "8081", "http://localhost:8081", true},
		{"http", "localhost:08081", "8081", "http://localhost:8081", true},
		{"http", "localhost", "8081", "http://localhost", true},
		{"http", "example.com:1", "8081", "http://example.com", true},
		{"http", "localhost:8081", "", "http://localhost", true},
		// The loopback host, by any name or address, is one site.
		{"http", "127.0.0.1:8081", "8081", "http://localhost:8081", true},
		{"http", "127.1", "8081", "http://localhost", true},
		{"http", "127.0.0.2:8081", "8081", "http://localhost:8081", true},
		{"http", "LOCALHOST.", "8081", "http://localhost", true},
		{"http", "app.localhost:8081", "8081", "http://localhost:8081", true},
		{"http", "[::1]:8081", "8081", "http://localhost:8081", true},
		{"http", "[0:0::1]", "8081", "http://localhost", true},
		{"http", "[::ffff:127.0.0.1]", "8081", "http://localhost", true},
		{"http", "[2001:DB8::1]:1", "8081", "http://[2001:db8::1]", true},
		// An IPv4 address in any form a client's resolver reads.
		{"https", "192.0.2.1", "443", "https://192.0.2.1", true},
		{"https", "192.0.513", "443", "https://192.0.2.1", true},
		{"https", "0xc0.0.2.1", "443", "https://192.0.2.1", true},
		{"https", "0300.0.2.1", "443", "https://192.0.2.1", true},
		{"https", "3221225985", "443", "https://192.0.2.1", true},
		{"https", "192.0.2.1.", "443", "https://192.0.2.1", true},
		{"https", "[::ffff:192.0.2.1]", "443", "https://192.0.2.1", true},
		{"https", "2001.db8.example", "443", "https://2001.db8.example", true},
		{"https", "internal_name.corp", "443", "https://internal_name.corp", true},
		// Not a host.
		{"https", "", "443", "", false},
		{"https", ":443", "443", "", false},
		{"https", ".", "443", "", false},
		{"https", "a..b", "443", "", false},
		{"https", ".a", "443", "", false},
		{"https", "a b", "443", "", false},
		{"https", "a/b", "443", "", false},
		{"https", "user@a", "443", "", false},
		{"https", "a%2eb", "443", "", false},
		{"https", "caf\u00e9.example", "443", "", false},
		{"https", "\u212Aelvin.example", "443", "", false},
		{"https", "[fe80::1%25eth0]", "443", "", false},
		{"https", "[1.2.3.4]", "443", "", false},
		{"https", "192.0.2.256", "443", "", false},
		{"https", "1.2.3.4.5", "443", "", false},
		{"https", "example.99", "443", "", false},
		{"https", "0xg.0x1", "443", "", false},
		{"https", "[::1]x", "443", "", false},
		{"https", "[::1", "443", "", false},
		{"https", strings.Repeat("a", 254), "443", "", false},
		{"ftp", "example.com", "21", "", false},
	}
	for _, tt := range tests {
		got, ok := SiteKey(tt.scheme, tt.host, tt.localPort)
		if got != tt.want || ok != tt.ok {
			t.Errorf("SiteKey(%q, %q, %q) = %q, %v; want %q, %v", tt.scheme, tt.host, tt.localPort, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzSiteKey checks that a key is its own canonical form, and that it
// always names a robots.txt URL the Store accepts.
func FuzzSiteKey(f *testing.F) {
	for _, h := range []string{"example.com", "Example.COM.:0443", "[::1]:8081", "a..b", "victim.test:abc", "[fe80::1%25x]"} {
		f.Add(h, "8081")
	}
	f.Fuzz(func(t *testing.T, host, port string) {
		key, ok := SiteKey("https", host, port)
		if !ok {
			return
		}
		hostPart := strings.TrimPrefix(key, "https://")
		again, ok2 := SiteKey("https", hostPart, port)
		if !ok2 || again != key {
			t.Fatalf("SiteKey(%q) = %q, but its host part %q gives %q, %v", host, key, hostPart, again, ok2)
		}
		if _, err := robotsURL("https", key); err != nil {
			t.Fatalf("SiteKey(%q) = %q, which the Store refuses: %v", host, key, err)
		}
	})
}

// TestSiteHost checks that every spelling of a site has one host key.
func TestSiteHost(t *testing.T) {
	for _, tt := range []struct{ key, want string }{
		{"http://localhost:8081", "http://localhost"},
		{"http://localhost", "http://localhost"},
		{"https://example.com", "https://example.com"},
		{"http://[2001:db8::1]:8080", "http://[2001:db8::1]"},
		{"http://[2001:db8::1]", "http://[2001:db8::1]"},
		{"inline", "inline"},
	} {
		if got := SiteHost(tt.key); got != tt.want {
			t.Errorf("SiteHost(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}
