// Package contract checks osb against the HTTP contracts it speaks. Its
// tests run real osb commands in-process against the local server, record
// every exchange on the wire, and validate each request and response against
// the project's own OpenAPI files in specs/ and, when ../shared/upstream-specs
// exists, against the upstream files too (known divergences of real servers
// sit in one allow-list, each with its reason). A drift test compares specs/
// with the upstream files. The package has no code outside its tests.
package contract
