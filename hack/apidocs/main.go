// Command apidocs writes the API reference (Documentation/api.md) from the Go
// types of pkg/apis, so the reference cannot drift from what the CRDs accept.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// apiDirs are the API versions documented, newest first: the order readers
// should prefer them in.
var apiDirs = []string{
	"pkg/apis/nginx/v1beta1",
	"pkg/apis/nginx/v1alpha1",
}

// generate parses the API packages under root and renders the reference.
func generate(root string) ([]byte, error) {
	var pkgs []*apiPackage
	for _, d := range apiDirs {
		p, err := loadDir(filepath.Join(root, d))
		if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
	return render(pkgs)
}

func main() {
	out := flag.String("o", "-", "output file; - for standard output")
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	data, err := generate(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apidocs:", err)
		os.Exit(1)
	}
	if *out == "-" {
		_, err = os.Stdout.Write(data)
	} else {
		err = os.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "apidocs:", err)
		os.Exit(1)
	}
}
