// sign.mjs signs HTTP requests with Cloudflare's web-bot-auth package
// (the version package-lock.json pins), for caddymodule's interop test.
//
// It reads a plan as JSON on standard input:
//
//   {"key": <Ed25519 private JWK: kty, crv, x, d>,
//    "requests": [{"name", "url", "headers": {...}, "label"?, "components"?,
//                  "created", "expires", "key"?}]}
//
// A request's own key, when given, signs it in place of the plan's.
// created and expires are Unix seconds. components, when given, are
// strings ("@authority", "@path", "signature-agent") or {"name", "key"}
// for a Dictionary member (sent to the package as a component with a key
// parameter); without them the package chooses its default: @authority,
// and the whole signature-agent field when the request has one. label
// names the signature (the package's "key" option; its default is sig1).
//
// It writes {"<name>": {"Signature": ..., "Signature-Input": ...}, ...}
// on standard output, and nothing else.
import { signatureHeaders } from "web-bot-auth";
import { signerFromJWK } from "web-bot-auth/crypto";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const plan = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const signer = await signerFromJWK(plan.key);
const out = {};
for (const req of plan.requests) {
  const reqSigner = req.key ? await signerFromJWK(req.key) : signer;
  const request = new Request(req.url, { headers: req.headers ?? {} });
  const components = req.components?.map((c) =>
    typeof c === "string" ? c : { name: c.name, parameters: new Map([["key", c.key]]) },
  );
  out[req.name] = await signatureHeaders(request, reqSigner, {
    created: new Date(req.created * 1000),
    expires: new Date(req.expires * 1000),
    key: req.label,
    components,
  });
}
process.stdout.write(JSON.stringify(out));
