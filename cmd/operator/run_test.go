package main

import (
	"os"
	"testing"

	"github.com/nginx-operator/nginx-operator/pkg/operator"
)

// Two operators on one machine, started without --webhook-cert-dir, must not
// write their webhook certificates into one shared directory.
func TestWebhookCertificatesGoToADirectoryOfTheProcessOwn(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	a := operator.Options{ConversionWebhook: true}
	b := operator.Options{ConversionWebhook: true}
	cleanA, err := usePrivateWebhookCertDir(&a)
	if err != nil {
		t.Fatal(err)
	}
	cleanB, err := usePrivateWebhookCertDir(&b)
	if err != nil {
		t.Fatal(err)
	}
	if a.WebhookCertDir == "" || a.WebhookCertDir == b.WebhookCertDir {
		t.Fatalf("certificate directories %q and %q, want two distinct ones", a.WebhookCertDir, b.WebhookCertDir)
	}
	info, err := os.Stat(a.WebhookCertDir)
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("directory %s: %v, mode %v; want a private directory", a.WebhookCertDir, err, info.Mode().Perm())
	}
	cleanA()
	cleanB()
	if _, err := os.Stat(a.WebhookCertDir); !os.IsNotExist(err) {
		t.Errorf("the directory is left after exit: %v", err)
	}

	// An explicit directory, or certificates managed by someone else, are kept.
	for _, o := range []operator.Options{
		{ConversionWebhook: true, WebhookCertDir: "/etc/webhook"},
		{ConversionWebhook: true, WebhookCertManagement: operator.CertManagementExternal},
		{ConversionWebhook: false},
	} {
		want := o.WebhookCertDir
		if _, err := usePrivateWebhookCertDir(&o); err != nil || o.WebhookCertDir != want {
			t.Errorf("%+v: directory %q, want %q", o, o.WebhookCertDir, want)
		}
	}
}
