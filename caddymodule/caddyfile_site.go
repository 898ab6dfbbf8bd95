package caddymodule

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
)

// Two robots_enforce handlers in one block of a site judge the same
// requests, one after the other: each writes its record of a request the
// other recorded, a request the first lets pass in log mode is denied by
// the second, and a client's robots.txt is noted as served twice. The
// Caddyfile refuses a second handler in one block when either has no
// matcher (it matches every request the other does); two handlers with a
// matcher each are taken as meant for their own paths. Handlers in two
// handle blocks never meet one request, and are not compared.

// sitesState is the key, in the adapter's State, of where the handlers of
// each block were given.
const sitesState = "robots_enforce.handlers"

// givenHandler is a robots_enforce directive as the check remembers it.
type givenHandler struct {
	where   string // file:line
	matcher bool
}

// oneHandlerPerSite fails when a robots_enforce handler is given in a
// block that already has one, and either of them has no matcher; where
// is the directive's file:line, and matcher says whether it has one.
func oneHandlerPerSite(h httpcaddyfile.Helper, where string, matcher bool) error {
	site := siteOf(h)
	if site == "" || h.State == nil {
		return nil // the block cannot be named: no check
	}
	// Directives in a handle or route block have a BlockState of that
	// block's own; at the top of a site it is the adapter's State.
	key := fmt.Sprintf("%s#%x", site, reflect.ValueOf(h.BlockState).Pointer())
	given, _ := h.State[sitesState].(map[string][]givenHandler)
	if given == nil {
		given = make(map[string][]givenHandler)
		h.State[sitesState] = given
	}
	here := givenHandler{where: where, matcher: matcher}
	for _, first := range given[key] {
		if !first.matcher || !matcher {
			return fmt.Errorf("robots_enforce given twice in one site: first at %s; both would judge and record the same requests, "+
				"one after the other; give one, or a matcher to each for its own paths, at %s", first.where, where)
		}
	}
	given[key] = append(given[key], here)
	return nil
}

// siteOf names the site block h is in, by its addresses and where they
// are written. Caddy keeps the block to itself (Helper's parentBlock); it
// is read, not changed, by reflection, and when it cannot be read, as
// after a change in Caddy, siteOf returns "" and the check is not made
// (the golden file testdata/adapt/error_two_handlers.caddyfiletest fails
// then, so that the check is not lost unseen).
func siteOf(h httpcaddyfile.Helper) string {
	block := reflect.ValueOf(h).FieldByName("parentBlock")
	if !block.IsValid() || block.Kind() != reflect.Struct {
		return ""
	}
	keys := block.FieldByName("Keys")
	if !keys.IsValid() || keys.Kind() != reflect.Slice {
		return ""
	}
	var b strings.Builder
	for i := range keys.Len() {
		k := keys.Index(i)
		if k.Kind() != reflect.Struct {
			return ""
		}
		text, file, line := k.FieldByName("Text"), k.FieldByName("File"), k.FieldByName("Line")
		if text.Kind() != reflect.String || file.Kind() != reflect.String || line.Kind() != reflect.Int {
			return ""
		}
		fmt.Fprintf(&b, "%s@%s:%d ", text.String(), file.String(), line.Int())
	}
	return b.String()
}
