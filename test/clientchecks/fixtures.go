package clientchecks

import (
	"strings"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// The one user of UsersSecret.
const User, Password = "ada", "correct horse"

// Fixtures are what Spec's references hold, made once per test: the tier
// puts them where its nginx reads them.
type Fixtures struct {
	// Content is the document root, file name to body (SiteConfigMap).
	Content map[string]string
	// Htpasswd holds User (UsersSecret).
	Htpasswd string
	// PartnersCA signs the client certificates PartnersHost accepts
	// (PartnersCA).
	PartnersCA *tools.CA
}

// bigText is a file gzip compresses: longer than gzip's minimum length and
// repetitive.
var bigText = strings.Repeat("compressible line of text\n", 512)

// NewFixtures makes the fixtures of a test.
func NewFixtures(t testing.TB) *Fixtures {
	t.Helper()
	ca, err := tools.NewCA("partners", time.Hour)
	tools.Must(t, err)
	return &Fixtures{
		Content: map[string]string{
			"index.html": "<h1>the app</h1>\n", "404.html": "<h1>nothing here</h1>\n", "big.txt": bigText,
			"cached.txt": "cached\n", "quiet": "shh\n", "internal.html": "inside\n", "private.html": "secret\n", "limited.html": "scarce\n", "keyed.html": "metered\n",
		},
		Htpasswd:   tools.Htpasswd(User, Password),
		PartnersCA: ca,
	}
}
