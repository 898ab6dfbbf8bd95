// Package agent reads who is asking: the product tokens a User-Agent
// header names, and what kind of client sent it. It knows nothing of
// robots.txt; the robots.txt in force (package robotstxt) and the
// judgement (package enforce) read what it finds.
//
// Tokenize reads a header's candidate product tokens, the strings that
// could name a robots.txt group (RFC 9309 §2.2.1), within
// MaxUserAgentLength octets and without allocating; Tokens.Candidates
// yields them in the order a group choice considers them. A Classifier
// tells crawlers from other automated clients and from browsers, by the
// crawler catalogue (crawlers.txt, embedded) and by the header's shape;
// a WildcardPolicy says which of those classes the "*" group binds (see
// docs/classification.md). A HeaderCache keeps what was read of recent
// headers, lock-free for readers, since a client sends the same header
// request after request.
//
// It imports no Caddy, and nothing of this module but package rules.
package agent
