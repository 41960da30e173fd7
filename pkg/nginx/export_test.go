package nginx

// TestPaths is testPaths for the package's external tests (package
// nginx_test): a document root, mime.types and a self-signed certificate per
// TLS Secret under dir, as Paths for Render.
var TestPaths = testPaths
