// Package rules parses robots.txt files and decides, for a crawler's product
// token and a URL, whether the file allows the fetch. It implements RFC 9309
// (the Robots Exclusion Protocol), the AI usage preferences that
// draft-ietf-aipref-attach-05 adds to it, and Cloudflare's Content-Signal
// lines, and nothing else: no HTTP, no User-Agent header parsing, no
// caching.
//
// A file is parsed once into an immutable *Robots, whose groups are compiled
// for matching; decisions then neither re-read the file nor allocate, and
// are safe from any number of goroutines.
//
//	r := rules.Parse(body)
//	v := r.Decide("GPTBot", "/private/report?id=7")
//	if !v.Allowed {
//		log.Printf("disallowed by line %d: %s", v.Rule.Line, v.Rule.Pattern)
//	}
//
// # Profile
//
// Where RFC 9309 is explicit, this package follows it. Where the RFC is
// silent, it reads files as Google's open-source parser reads them, since an
// enforcer must not call a crawler non-compliant for reading a file the way
// the largest crawler does. Each point marked "Google-compatible" in the
// documentation of this package is such a choice:
//
//   - keys are recognised by their start, case-insensitively, with common
//     typos ("useragent", "dissallow") and a missing colon accepted;
//   - a user-agent value names the product token of its leading [A-Za-z_-]
//     run ("Foo Bot/1.0" names "Foo"); "*" alone or followed by white space
//     is the global agent, "*Bot" is not;
//   - blank lines, comments and records other than allow and disallow
//     between user-agent lines do not end a group, Content-Usage and
//     Content-Signal lines included (a deviation from the ABNF of
//     draft-ietf-aipref-attach-05 §3, which makes Content-Usage a rule, so
//     that access does not depend on whether the reader knows AIPREF);
//   - a leading UTF-8 byte order mark, or a prefix of one, is skipped;
//     CR, LF and CRLF each end a line; a line is read up to MaxLineLength
//     octets;
//   - "$" is special only as a pattern's last character;
//   - a rule's priority is the octet length of its normalised pattern, "*"
//     included, so "Disallow: /fish*" beats "Allow: /fish" on "/fish";
//   - "Allow: /dir/index.html" also allows "/dir/".
//
// Deviations from Google's parser, where the RFC says otherwise or where an
// enforcer needs more: /robots.txt is always allowed (RFC 9309 §2.2.2);
// percent-encoding is normalised on both the rule and the target side (RFC
// 9309 §2.2.2), where Google only normalises the rule; a target starting
// with "/" is always read as a path.
//
// Parsing never fails as a whole (RFC 9309 §2.3.1.5). Every line that could
// not be used, or had to be interpreted, is reported in Robots.Diagnostics.
// At most DefaultMaxSize octets are read unless Options say otherwise
// (RFC 9309 §2.5).
//
// # AI usage preferences
//
// A group's Content-Usage rules (draft-ietf-aipref-attach-05 §3) attach a
// usage preference, in the vocabulary of draft-ietf-aipref-vocab-08
// ("train-ai=n, ai-use=n, search=y"), to the paths the group lets crawlers
// fetch. The rule whose path pattern is the longest that matches decides,
// as for allow and disallow; a rule without a path applies to every path,
// as "/" does; rules with the same pattern combine, any "n" winning.
// Cloudflare's Content-Signal lines (contentsignals.org) are read into the
// same vocabulary (search as search, ai-train as train-ai, ai-input as
// ai-use; yes as y, no as n) and chosen the same way among themselves; the
// answers of the two kinds of line then combine as statements made in
// different ways do (vocab-08 §5.1). Decide puts the preference in
// Verdict.Usage, whose Rules say which lines, of which kind, stated it;
// Group.UsageCanonical is the allocation-free form, beside
// Group.DecideCanonical. ParseUsage reads the Content-Usage header field,
// and CombineUsage combines statements. Both kinds of line are reported in
// Diagnostics like any other line.
//
// # Memory
//
// A parsed file is held in a compact form: every string it keeps
// (patterns, user-agent values, record keys and values, what diagnostics
// quote) is written once into one backing string, its lines, groups and
// indexes are flat tables of offsets into it, and groups whose rules rank
// alike share one index. Comments and white space are not kept, nor is the
// body. Over the files in testdata/robots, a parsed file holds a median
// 2.7 times its size. Groups, Records and Diagnostics make their values
// when called. HeldSize says what a parsed file holds, to the octet the
// heap gives it, for a caller that bounds memory; DecisionsOnly makes a
// copy that keeps only what allow and disallow decisions need, for one
// that keeps older versions of a file to judge requests again.
//
// Callers that choose groups themselves decide a path they have made
// canonical (AppendCanonical) with Group.DecideCanonical, and read its
// usage preference with Group.UsageCanonical; both take strings.
//
// # Speed
//
// Patterns are matched without regular expressions and without
// backtracking: "*" splits a pattern into literal segments, each found at
// its leftmost place, so a match is linear in the path's length whatever the
// pattern. Rules are indexed by their literal prefix, and rules whose prefix
// is only "/" by a key from a later segment, so a decision tries only the
// few rules that can match.
package rules
