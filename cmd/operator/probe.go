package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1alpha1"
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// probe asks a running operator, through its conversion webhook as the
// apiserver would, to convert a v1alpha1 NginxOperator to v1beta1, and
// verifies the serving certificate against the CA the operator published.
// It is the Helm chart's `helm test`: an answer proves the Service routes to
// a ready replica, the certificate is the one the CRD trusts, and the
// conversion code runs.
func probe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("operator probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "the conversion webhook's URL, such as https://nginx-operator-webhook.nginx-operator.svc/convert")
	caFile := fs.String("ca-file", "", "PEM CA bundle that must have signed the webhook's certificate (the ca.crt of the webhook's Secret)")
	timeout := fs.Duration("timeout", 30*time.Second, "how long to keep asking before failing")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *url == "" || *caFile == "" {
		fmt.Fprintln(stderr, "operator probe: --url and --ca-file are required")
		return 2
	}
	client, err := probeClient(*caFile)
	if err != nil {
		fmt.Fprintln(stderr, "operator probe:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	// A replica may still be starting when the probe runs right after an
	// install: retry until the timeout, reporting the last error that says
	// why (an attempt the timeout cuts short says only that time ran out,
	// which on a loaded machine can be the first one's fate too).
	var last error
	for {
		began := time.Now()
		err = convertOnce(ctx, client, *url)
		if err == nil {
			fmt.Fprintf(stdout, "the operator answered at %s: converted a v1alpha1 NginxOperator to v1beta1 in %s\n", *url, time.Since(began).Round(time.Millisecond))
			return 0
		}
		if last == nil || ctx.Err() == nil {
			last = err
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(stderr, "operator probe:", last)
			return 1
		case <-time.After(time.Second):
		}
	}
}

func probeClient(caFile string) (*http.Client, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	return &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}, nil
}

// convertOnce sends one ConversionReview and checks its answer.
func convertOnce(ctx context.Context, client *http.Client, url string) error {
	const uid = types.UID("nginx-operator-probe")
	obj, err := json.Marshal(map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "NginxOperator",
		"metadata": map[string]any{"name": "probe", "namespace": "default"},
		"spec":     map[string]any{"port": 8080, "replicas": 1},
	})
	if err != nil {
		return err
	}
	review := apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "ConversionReview"},
		Request: &apiextensionsv1.ConversionRequest{
			UID: uid, DesiredAPIVersion: v1beta1.GroupVersion.String(),
			Objects: []runtime.RawExtension{{Raw: obj}},
		},
	}
	body, err := json.Marshal(review)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s: %s", url, resp.Status, data)
	}
	return checkConverted(data, uid)
}

// checkConverted accepts the webhook's answer when it is for our request,
// succeeded, and holds the object at the version asked for.
func checkConverted(data []byte, uid types.UID) error {
	var answer apiextensionsv1.ConversionReview
	if err := json.Unmarshal(data, &answer); err != nil {
		return fmt.Errorf("the answer is no ConversionReview: %w", err)
	}
	r := answer.Response
	switch {
	case r == nil:
		return errors.New("the ConversionReview has no response")
	case r.UID != uid:
		return fmt.Errorf("the response is for request %q, not %q", r.UID, uid)
	case r.Result.Status != metav1.StatusSuccess:
		return fmt.Errorf("conversion failed: %s", r.Result.Message)
	case len(r.ConvertedObjects) != 1:
		return fmt.Errorf("%d converted objects, want 1", len(r.ConvertedObjects))
	}
	var got metav1.TypeMeta
	if err := json.Unmarshal(r.ConvertedObjects[0].Raw, &got); err != nil {
		return err
	}
	if got.APIVersion != v1beta1.GroupVersion.String() || got.Kind != "NginxOperator" {
		return fmt.Errorf("converted to %s %s, want %s NginxOperator", got.APIVersion, got.Kind, v1beta1.GroupVersion)
	}
	return nil
}
