package verify

import (
	"errors"
	"net/url"
	"strings"

	"github.com/dunglas/httpsfv"
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
	// SignsAll says that the operator documents every request of these
	// tokens as signed, so that an unsigned claim is forged. Without it an
	// unsigned claim is left to the token's other methods.
	SignsAll bool
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
	// (OpenAI's "ChatGPT agent allowlisting" article,
	// help.openai.com/en/articles/11845367, read through a stored copy;
	// also observed by Simon Willison, 2025-08-04, and Castle's write-up).
	// That article says ChatGPT agent signs every request, but ChatGPT
	// agent sends a browser User-Agent, which names no token; OpenAI's
	// ChatGPT-User allowlisting article, cited by several verifiers for
	// signed ChatGPT-User requests, could not be read here, and OpenAI
	// publishes an address list for ChatGPT-User: so the token mapping is
	// unconfirmed, and an unsigned ChatGPT-User claim is left to that list.
	{Origin: "https://chatgpt.com", Tokens: []string{"ChatGPT-User"},
		Doc: "https://help.openai.com/en/articles/9785974-chatgpt-user-allowlisting"},
	// Google signs some Google-Agent requests as "https://agent.bot.goog"
	// (Signature-Agent g="https://agent.bot.goog", signatures labelled g,
	// keys at https://agent.bot.goog/.well-known/http-message-signatures-directory):
	// developers.google.com/crawling/docs/crawlers-fetchers/allow-google-agent
	// and .../web-bot-auth, read November 2026. Google says it does not
	// sign every request of an agent (the experiment covers a subset), so
	// an unsigned Google-Agent claim is left to its other methods.
	{Origin: "https://agent.bot.goog", Tokens: []string{"Google-Agent"},
		Doc: "https://developers.google.com/crawling/docs/crawlers-fetchers/web-bot-auth"},
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
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.ForceQuery, u.Fragment != "", u.Opaque != "":
		return "", errors.New("not an origin: has a path, query or fragment")
	}
	host := strings.ToLower(u.Host)
	host = strings.TrimSuffix(host, ":443")
	return "https://" + host, nil
}

// signedAgent returns the origin of the Signature-Agent member si covers
// (draft-ietf-webbotauth-httpsig-protocol, "Signature-Agent"):
//
//   - "signature-agent";key="k" covers the Dictionary member k;
//   - "signature-agent" without ;key covers the whole field. A bare
//     sf-string (the legacy form, which the draft lets a verifier accept)
//     is that member. A Dictionary covered whole covers each member: the
//     signature is attributed to the member keyed by its label, as the
//     draft keys it, or else to the only member. Cloudflare's web-bot-auth
//     0.1.3 signs so by default, with the label sig1 whatever the member
//     is called; a field of several members, none keyed by the label,
//     names no agent.
//
// Only the directory type (no type parameter, or type=directory) is
// resolved.
func signedAgent(si sigInput, field []string) (string, bool) {
	for _, c := range si.components {
		if c.Value.(string) != "signature-agent" {
			continue
		}
		var key string
		if c.Params != nil {
			if k, ok := c.Params.Get("key"); ok {
				key, _ = k.(string)
			}
		}
		var item httpsfv.Item
		if key == "" && strings.HasPrefix(strings.TrimSpace(field[0]), `"`) {
			it, err := httpsfv.UnmarshalItem(field)
			if err != nil {
				return "", false
			}
			item = it
		} else {
			d, err := httpsfv.UnmarshalDictionary(field)
			if err != nil {
				return "", false
			}
			var m httpsfv.Member
			var ok bool
			switch names := d.Names(); {
			case key != "":
				m, ok = d.Get(key)
			case len(names) == 1:
				m, ok = d.Get(names[0])
			default:
				m, ok = d.Get(si.label)
			}
			if !ok {
				return "", false
			}
			if item, ok = m.(httpsfv.Item); !ok {
				return "", false
			}
		}
		s, ok := item.Value.(string)
		if !ok {
			return "", false
		}
		if item.Params != nil {
			if t, ok := item.Params.Get("type"); ok && t != httpsfv.Token("directory") {
				return "", false
			}
		}
		origin, err := agentOrigin(s)
		return origin, err == nil
	}
	return "", false
}

// AgentOrigin checks that s is an https origin (no path, query or
// fragment), as a Signature-Agent member of the directory type must be,
// and returns it normalized as the verifier keys agents: lower-case, no
// default port, no trailing slash.
func AgentOrigin(s string) (string, error) {
	return agentOrigin(s)
}
