// Package api holds the OpenAPI document of the HTTP API (openapi.yaml), embedded so the
// service can serve it at /openapi.yaml and render it at /docs.
package api

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document describing every route of the service.
//
//go:embed openapi.yaml
var OpenAPI []byte
