package robotstxt

import "fmt"

// A SiteEvent is something a Store's bounds did to a site, told to
// StoreConfig.OnSite: what an operator counts to see whether MaxHosts,
// MaxMemory and the budget of first fetches fit the sites served.
type SiteEvent uint8

const (
	// SiteForgottenHosts: a site was forgotten to keep the sites held
	// within MaxHosts.
	SiteForgottenHosts SiteEvent = iota + 1
	// SiteForgottenMemory: a site was forgotten to keep what the sites
	// hold within MaxMemory.
	SiteForgottenMemory
	// SiteRefetched: a site forgotten before its copy was due for a
	// refresh was asked for again, and is fetched again: a fetch the
	// bounds cost.
	SiteRefetched
	// SiteRefusedNewHosts: a request for a site not held was refused
	// (RefusalHostBudget): the budget of first fetches is spent.
	SiteRefusedNewHosts
	// SiteRefusedInFlight: a request for a site not held was refused
	// (RefusalHostBudget): as many fetches as MaxHosts are in flight.
	SiteRefusedInFlight
	// SiteCut: a site's robots.txt would hold more than a quarter of
	// MaxMemory, and was read only as far as fits (see
	// StoreConfig.MaxMemory).
	SiteCut
)

var siteEventNames = [...]string{
	SiteForgottenHosts:  "max_hosts",
	SiteForgottenMemory: "max_memory",
	SiteRefetched:       "refetched",
	SiteRefusedNewHosts: "new_hosts",
	SiteRefusedInFlight: "in_flight",
	SiteCut:             "cut",
}

// String returns the event's stable name: for a forgotten site the bound
// (max_hosts, max_memory), for a refusal its cause (new_hosts,
// in_flight), else refetched or cut.
func (ev SiteEvent) String() string {
	if int(ev) < len(siteEventNames) && siteEventNames[ev] != "" {
		return siteEventNames[ev]
	}
	return fmt.Sprintf("site_event(%d)", uint8(ev))
}
