package verify

import (
	"errors"
	"net/url"
	"strings"
)

// SignatureAgent is a Web Bot Auth signature agent known to speak for some
// product tokens: a request signed with a key from its directory proves
// them.
type SignatureAgent struct {
	// Origin is the agent's https origin, as its Signature-Agent header
	// names it ("https://chatgpt.com").
	Origin string
	// Tokens are the product tokens the agent signs for.
	Tokens []string
	// Doc is the operator's page documenting the signing.
	Doc string
}

// BuiltinSignatureAgents returns the built-in table of signature agents.
// The returned slice is a copy.
func BuiltinSignatureAgents() []SignatureAgent {
	return append([]SignatureAgent(nil), builtinAgents...)
}

var builtinAgents = []SignatureAgent{
	// OpenAI signs ChatGPT's agent requests with Signature-Agent
	// "https://chatgpt.com" and publishes its directory at
	// https://chatgpt.com/.well-known/http-message-signatures-directory
	// (observed and documented by Simon Willison, 2025-08-04, and by
	// Castle's write-up of the directory). OpenAI's help article on
	// allowlisting ChatGPT-User is cited as the reference for signed
	// ChatGPT-User requests by several verifier libraries; that article
	// itself could not be read here, so the token mapping is unconfirmed.
	// ChatGPT agent sends a browser User-Agent, which names no token: only
	// a request that also claims ChatGPT-User is judged by it.
	{Origin: "https://chatgpt.com", Tokens: []string{"ChatGPT-User"},
		Doc: "https://help.openai.com/en/articles/9785974-chatgpt-user-allowlisting"},
}

// agentOrigin checks that s is an https origin, as the webbotauth draft
// requires of a Signature-Agent member of type "directory" (an empty path
// or "/" accepted), and returns its ASCII serialization: lower-case, no
// default port, no trailing slash.
func agentOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	switch {
	case u.Scheme != "https":
		return "", errors.New("not an https URL")
	case u.Host == "" || u.User != nil:
		return "", errors.New("not an origin")
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "", u.Opaque != "":
		return "", errors.New("not an origin: has a path, query or fragment")
	}
	host := strings.ToLower(u.Host)
	host = strings.TrimSuffix(host, ":443")
	return "https://" + host, nil
}
