package main

import (
	"fmt"
	"io"

	"github.com/nginx-operator/nginx-operator/config/crd"
	"github.com/nginx-operator/nginx-operator/pkg/version"
)

func printVersion(stdout io.Writer) int {
	fmt.Fprintln(stdout, version.String())
	return 0
}

// printCRDs writes the embedded CRDs as one multi-document YAML stream, ready
// for `operator crds | kubectl apply --server-side -f -`. Each generated file
// already starts with a "---" separator.
func printCRDs(stdout, stderr io.Writer) int {
	files, err := crd.Files()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for _, f := range files {
		if _, err := stdout.Write(f); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	return 0
}
