package upgrade_test

import (
	"testing"

	"github.com/nginx-operator/nginx-operator/test/framework/releases"
)

// release is a build of the operator from one commit of this repository.
type release = releases.Release

// previousRelease is the release this test upgrades from (see
// releases.BookEraUpgrade for why not always releases.Previous), built once
// per machine.
func previousRelease(t *testing.T) release { return releases.Build(t, releases.BookEraUpgrade) }
