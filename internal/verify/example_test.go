package verify_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/caddyserver/certmagic"

	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// Caddy's storage can keep the range lists' last good copies.
var _ verify.Storage = certmagic.Storage(nil)

// An operator's own range list, from a file, proves its token; the
// built-in lists are off so the example needs no network.
func Example() {
	v, err := verify.New(verify.Config{
		NoBuiltinLists:      true,
		NoBuiltinReverseDNS: true,
		RangeOverrides: []verify.RangeOverride{
			{Token: "ExampleBot", Source: "../../testdata/verify/ranges-synthetic.json"},
		},
	})
	if err != nil {
		panic(err)
	}
	v.Start() // reads the file before returning; URLs are fetched in the background
	defer v.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, addr := range []string{"192.0.2.40", "192.0.2.70"} {
		res, err := v.VerifyNow(ctx, "examplebot", netip.MustParseAddr(addr))
		fmt.Println(addr, res.Outcome, res.Method, err)
	}
	fmt.Println(v.Verify("Googlebot", netip.MustParseAddr("192.0.2.40"), nil).Outcome)
	// Output:
	// 192.0.2.40 verified ip_ranges <nil>
	// 192.0.2.70 forged ip_ranges <nil>
	// unverified
}
