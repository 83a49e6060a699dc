// Bearer tokens: accord.dev/contract/auth verifies them against the JWKS of the services this
// agent trusts (POLICY_TRUST: `NAME=JWKS` entries, comma-separated, each JWKS a URL or a file
// path; docs/service-keys.md).
package main

import "accord.dev/contract/auth"

// Principal is who called, as the verified token says.
type Principal = auth.Principal
