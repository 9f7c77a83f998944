package sandbox

// CABundle is, in an isolated sandbox, the CA bundle its TLS clients use
// (SSL_CERT_FILE and the like): the host's system roots plus the server's
// egress proxy CA (Config.TrustedCA). The host's own bundle, shared
// read-only, cannot take the extra CA, so the sandbox gets its own copy.
const CABundle = "/etc/osb/ca-certificates.crt"

// systemBundles are where distributions keep their root bundle; the first
// found is the one the sandbox copies.
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt", // Debian, Ubuntu, Alpine
	"/etc/pki/tls/certs/ca-bundle.crt",   // Fedora, RHEL
	"/etc/ssl/ca-bundle.pem",             // openSUSE
	"/etc/ssl/cert.pem",                  // others
}
