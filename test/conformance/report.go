package conformance

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/template"

	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	"sigs.k8s.io/yaml"
)

// Implementation is what the reports say of the project.
var Implementation = confv1.Implementation{
	Organization: "nginx-operator",
	Project:      "nginx-operator",
	URL:          "https://github.com/nginx-operator/nginx-operator",
	Contact:      []string{"https://github.com/nginx-operator/nginx-operator/issues/new"},
}

// ReportFileName is the name the gateway-api repository's
// conformance/reports/README.md gives a report:
// <API channel>-<implementation version>-<mode>-report.yaml.
func ReportFileName(r *confv1.ConformanceReport) string {
	return fmt.Sprintf("%s-%s-%s-report.yaml", r.GatewayAPIChannel, r.Implementation.Version, r.Mode)
}

// MarshalReport is the report as the suite writes it (its
// conformance.RunConformanceWithOptions): sigs.k8s.io/yaml of the struct,
// with its profiles by name. The suite lists them in the order of a map's
// walk, which changes from run to run; sorted, a regenerated report differs
// from the last only where a result does.
func MarshalReport(r *confv1.ConformanceReport) ([]byte, error) {
	sorted := *r
	sorted.ProfileReports = slices.Clone(r.ProfileReports)
	slices.SortFunc(sorted.ProfileReports, func(a, b confv1.ProfileReport) int { return strings.Compare(a.Name, b.Name) })
	return yaml.Marshal(&sorted)
}

// WriteReport writes r into dir, the project's folder of a Gateway API
// version in the layout of the gateway-api repository's
// conformance/reports (such as conformance/reports/v1.6.3/nginx-operator),
// replacing the report of another implementation version of the same
// channel and mode (the folder keeps the latest run's), and rewrites the
// folder's README.md, whose table lists the reports there. It returns the
// report's path.
func WriteReport(dir string, r *confv1.ConformanceReport) (string, error) {
	data, err := MarshalReport(r)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := ReportFileName(r)
	old, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%s-*-%s-report.yaml", r.GatewayAPIChannel, r.Mode)))
	if err != nil {
		return "", err
	}
	for _, o := range old {
		if filepath.Base(o) != name {
			if err := os.Remove(o); err != nil {
				return "", err
			}
		}
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", err
	}
	return path, WriteReadme(dir)
}

// WriteReadme writes dir's README.md: the table of contents of the
// reports in dir and how to reproduce them, in the form the gateway-api
// repository's conformance/reports/README.md asks for.
func WriteReadme(dir string) error {
	paths, err := filepath.Glob(filepath.Join(dir, "*-report.yaml"))
	if err != nil {
		return err
	}
	type row struct{ Channel, Version, VersionURL, Mode, File string }
	var rows []row
	gatewayAPI := ""
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var r confv1.ConformanceReport
		if err := yaml.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		rows = append(rows, row{r.GatewayAPIChannel, r.Implementation.Version, VersionURL(r.Implementation.Version), r.Mode, filepath.Base(p)})
		gatewayAPI = r.GatewayAPIVersion
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].File < rows[j].File })
	var b bytes.Buffer
	if err := readme.Execute(&b, map[string]any{"Rows": rows, "GatewayAPI": gatewayAPI, "Implementation": Implementation, "Profiles": profileList()}); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "README.md"), b.Bytes(), 0o644)
}

// describeVersion matches `git describe --tags --always --dirty`'s
// output past a tag: <tag>-<commits>-g<commit>[-dirty].
var describeVersion = regexp.MustCompile(`-g([0-9a-f]{7,40})(-dirty)?$`)

var commitVersion = regexp.MustCompile(`^([0-9a-f]{7,40})(-dirty)?$`)

// VersionURL is the page of the implementation version v, as the
// Makefile's VERSION (git describe) names it: a release's page for a tag,
// else the commit's.
func VersionURL(v string) string {
	if m := describeVersion.FindStringSubmatch(v); m != nil {
		return Implementation.URL + "/commit/" + m[1]
	}
	if m := commitVersion.FindStringSubmatch(v); m != nil {
		return Implementation.URL + "/commit/" + m[1]
	}
	return Implementation.URL + "/releases/tag/" + strings.TrimSuffix(v, "-dirty")
}

var readme = template.Must(template.New("README.md").Parse(`# nginx-operator

[nginx-operator]({{.Implementation.URL}}) is a Kubernetes operator for
nginx. Its Gateway API controller accepts the GatewayClasses whose
` + "`spec.controllerName`" + ` is ` + "`nginx.operator.dev/gateway-controller`" + ` and
gives each Gateway of such a class an nginx deployment of its own (an
` + "`NginxOperator`" + ` in the Gateway's namespace: an nginx StatefulSet and a
ClusterIP Service, whose address is the Gateway's), configured from the
Gateway's listeners and the routes attached to them.

The reports here are the conformance suite's
(` + "`sigs.k8s.io/gateway-api/conformance`" + ` {{.GatewayAPI}}) as it wrote them,
for the profiles {{.Profiles}}, with the extended features
the GatewayClass claims in its ` + "`status.supportedFeatures`" + `. The folder keeps
the latest run's report for each channel and mode.

## Table of contents

| API channel | Implementation version | Mode | Report |
|-------------|------------------------|------|--------|
{{- range .Rows}}
| {{.Channel}} | [{{.Version}}]({{.VersionURL}}) | {{.Mode}} | [{{.Version}} report](./{{.File}}) |
{{- end}}

## Reproduce

On Linux, as root (the run starts a Kubernetes node of its own: kubelet,
containerd, runc, kube-proxy; it needs no Docker engine and no cluster),
from a clone of the repository at the report's version:

` + "```" + `shell
git clone {{.Implementation.URL}}.git && cd nginx-operator
git checkout <implementation version>
make conformance
` + "```" + `

` + "`make conformance`" + ` builds what the run needs once (` + "`make test-deps`" + `:
etcd, the Kubernetes components, containerd, CoreDNS), then runs
` + "`go test ./test/conformance`" + `, which:

1. starts a local cluster (etcd, kube-apiserver, kube-controller-manager,
   kube-scheduler) with one real node;
2. builds the operator's images and the suite's backend image
   (` + "`echo-basic`" + `, from the suite's own module, under the names its
   manifests use) and imports them into the node;
3. installs Gateway API's standard channel CRDs from the
   ` + "`sigs.k8s.io/gateway-api`" + ` module, then the operator with
   ` + "`kubectl create -f bundle.yaml`" + `;
4. creates the GatewayClass ` + "`nginx`" + ` and waits until the operator
   accepts it and says which features it supports;
5. runs the suite with those features and writes the report here, with
   the version ` + "`git describe --tags --always --dirty`" + ` gives (the
   version stamped into the operator's image).
`))

// profileList names Profiles for a sentence: "A", "A and B", "A, B and C".
func profileList() string {
	var names []string
	for _, p := range Profiles {
		names = append(names, string(p.Name))
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
