package jsonnet_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-jsonnet"
	"github.com/prometheus/client_golang/prometheus"

	// The controller package registers controller-runtime's controller
	// metrics (controller_runtime_reconcile_total, ...) in ctrlmetrics.Registry.
	_ "sigs.k8s.io/controller-runtime/pkg/controller"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	"github.com/nginx-operator/nginx-operator/pkg/monitor"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// mixinExportedOperatorMetrics are the operator's own metric names the mixin
// may use: what pkg/metrics and the controllers export. A metric renamed in
// the mixin, or here, without the other fails
// TestMixinExpressionsUseOnlyExportedOperatorMetrics.
var mixinExportedOperatorMetrics = map[string]bool{
	"nginx_operator_build_info":                            true,
	"nginx_operator_reconcile_errors_total":                true,
	"nginx_operator_instance_available":                    true,
	"nginx_operator_monitor_targets":                       true,
	"nginx_operator_backup_last_success_timestamp_seconds": true,
	"nginx_operator_backup_last_run_failed":                true,
	"nginx_operator_backup_last_duration_seconds":          true,
	"nginx_operator_backup_last_size_bytes":                true,
	"nginx_operator_backup_failures_total":                 true,
	"nginx_operator_backup_schedule_interval_seconds":      true,
}

// mixinControllerRuntimeMetrics are the controller_runtime_* metric
// families the mixin may use (controller-runtime counts and times the
// operator's reconciliations), and whether each is a histogram, whose
// _bucket, _sum and _count series may be used too.
// TestMixinControllerRuntimeMetricsAreServed checks controller-runtime
// registers each of them.
var mixinControllerRuntimeMetrics = map[string]bool{
	"controller_runtime_reconcile_total":                 false,
	"controller_runtime_reconcile_errors_total":          false,
	"controller_runtime_terminal_reconcile_errors_total": false,
	"controller_runtime_reconcile_time_seconds":          true,
}

// mixinControllerRuntimeFamily is the controller-runtime metric family that
// the series name belongs to, if the mixin may use it.
func mixinControllerRuntimeFamily(name string) (string, bool) {
	if _, ok := mixinControllerRuntimeMetrics[name]; ok {
		return name, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if family, cut := strings.CutSuffix(name, suffix); cut && mixinControllerRuntimeMetrics[family] {
			return family, true
		}
	}
	return "", false
}

const mixinRunbookBase = "https://github.com/nginx-operator/nginx-operator/blob/main/Documentation/monitoring.md#"

type mixinRuleGroups struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Record      string            `json:"record"`
			Expr        string            `json:"expr"`
			For         string            `json:"for"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

// mixinVM evaluates jsonnet the way the documentation tells users to: with
// the jsonnet/ directory on the library path.
func mixinVM() *jsonnet.VM {
	vm := jsonnet.MakeVM()
	vm.Importer(&jsonnet.FileImporter{JPaths: []string{".."}})
	return vm
}

// mixinEval evaluates a snippet (which may import the mixin) into v.
func mixinEval(t *testing.T, snippet string, v any) {
	t.Helper()
	out, err := mixinVM().EvaluateAnonymousSnippet("mixin_test.jsonnet", snippet)
	if err != nil {
		t.Fatalf("evaluating %s: %v", snippet, err)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("decoding %s: %v", snippet, err)
	}
}

// mixinRender renders one of the mixin's string-output entrypoints, as
// `jsonnet -S` does.
func mixinRender(t *testing.T, entrypoint string) string {
	t.Helper()
	vm := mixinVM()
	vm.StringOutput = true
	out, err := vm.EvaluateFile(filepath.Join("mixin", entrypoint))
	if err != nil {
		t.Fatalf("rendering %s: %v", entrypoint, err)
	}
	return out
}

func mixinAlertsAndRules(t *testing.T) (alerts, rules mixinRuleGroups) {
	t.Helper()
	mixinEval(t, "(import 'nginx-operator/mixin/mixin.libsonnet').prometheusAlerts", &alerts)
	mixinEval(t, "(import 'nginx-operator/mixin/mixin.libsonnet').prometheusRules", &rules)
	return alerts, rules
}

// mixinWriteRuleFiles renders alerts.yaml and rules.yaml into dir, the names
// the unit tests in mixin/tests list in rule_files.
func mixinWriteRuleFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	for entry, file := range map[string]string{"alerts.jsonnet": "alerts.yaml", "rules.jsonnet": "rules.yaml"} {
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, []byte(mixinRender(t, entry)), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	sort.Strings(files)
	return files
}

func TestMixinRenderedRuleFilesPassPromtoolCheckRules(t *testing.T) {
	promtool := tools.Installed(t, tools.InstallPrometheus, "promtool")
	files := mixinWriteRuleFiles(t, t.TempDir())
	out, err := exec.Command(promtool, append([]string{"check", "rules"}, files...)...).CombinedOutput()
	if err != nil || strings.Count(string(out), "SUCCESS") != len(files) {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}

func mixinUnitTestFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("mixin", "tests", "*_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no rule unit tests in mixin/tests")
	}
	return files
}

func TestMixinRuleUnitTestsPassPromtoolTestRules(t *testing.T) {
	promtool := tools.Installed(t, tools.InstallPrometheus, "promtool")
	dir := t.TempDir()
	mixinWriteRuleFiles(t, dir)
	for _, src := range mixinUnitTestFiles(t) {
		t.Run(filepath.Base(src), func(t *testing.T) {
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			// The test file sits next to the rendered rule files so its
			// relative rule_files resolve to them.
			dst := filepath.Join(dir, filepath.Base(src))
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(promtool, "test", "rules", dst).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "SUCCESS") {
				t.Fatalf("promtool test rules %s: %v\n%s", src, err, out)
			}
		})
	}
}

type mixinUnitTestFile struct {
	Tests []struct {
		AlertRuleTest []struct {
			AlertName string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
		PromQLExprTest []struct {
			Expr       string `json:"expr"`
			ExpSamples []any  `json:"exp_samples"`
		} `json:"promql_expr_test"`
	} `json:"tests"`
}

// TestMixinEveryRuleHasUnitTests holds the unit tests to the mixin: each
// alert has a case where it fires and one where it stays quiet, and each
// recording rule has expected samples. Adding a rule without tests fails.
func TestMixinEveryRuleHasUnitTests(t *testing.T) {
	alerts, rules := mixinAlertsAndRules(t)
	fires, quiet, recorded := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, file := range mixinUnitTestFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var f mixinUnitTestFile
		if err := yaml.Unmarshal(data, &f); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, tc := range f.Tests {
			for _, a := range tc.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					fires[a.AlertName] = true
				} else {
					quiet[a.AlertName] = true
				}
			}
			for _, e := range tc.PromQLExprTest {
				if len(e.ExpSamples) > 0 {
					recorded[e.Expr] = true
				}
			}
		}
	}
	for _, g := range alerts.Groups {
		for _, r := range g.Rules {
			if !fires[r.Alert] {
				t.Errorf("alert %s has no unit test where it fires", r.Alert)
			}
			if !quiet[r.Alert] {
				t.Errorf("alert %s has no unit test where it does not fire", r.Alert)
			}
		}
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if !recorded[r.Record] {
				t.Errorf("recording rule %s has no unit test with expected samples", r.Record)
			}
		}
	}
}

// TestMixinAlertsCarrySeverityAnnotationsAndDocumentedRunbook checks what an
// on-call engineer relies on: a severity to route by, a summary and a
// description, and a runbook link to a section that exists.
func TestMixinAlertsCarrySeverityAnnotationsAndDocumentedRunbook(t *testing.T) {
	alerts, _ := mixinAlertsAndRules(t)
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "Documentation", "monitoring.md"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range alerts.Groups {
		for _, r := range g.Rules {
			names = append(names, r.Alert)
			if s := r.Labels["severity"]; s != "critical" && s != "warning" && s != "info" {
				t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, s)
			}
			for _, a := range []string{"summary", "description"} {
				if r.Annotations[a] == "" {
					t.Errorf("%s: no %s annotation", r.Alert, a)
				}
			}
			if got, want := r.Annotations["runbook_url"], mixinRunbookBase+strings.ToLower(r.Alert); got != want {
				t.Errorf("%s: runbook_url %q, want %q", r.Alert, got, want)
			}
			// GitHub's anchor for a heading that is only the alert name is
			// the name lowercased.
			if !regexp.MustCompile(`(?m)^#{2,4} ` + regexp.QuoteMeta(r.Alert) + `$`).Match(doc) {
				t.Errorf("%s: Documentation/monitoring.md has no heading %q for its runbook link", r.Alert, r.Alert)
			}
		}
	}
	want := []string{
		"NginxBackupFailed", "NginxBackupTooOld", "NginxConfigReloadFailed", "NginxDown", "NginxInstanceUnavailable",
		"NginxMonitorMatchesNothing", "NginxOperatorDown", "NginxOperatorNoLeader", "NginxOperatorReconcileErrors", "NginxRequestLinesDropped", "NginxRouteErrors", "NginxRouteSlow",
	}
	sort.Strings(names)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("alerts (-want +got):\n%s", diff)
	}
}

type mixinDashboard struct {
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource *mixinDSRef     `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int         `json:"id"`
		Type       string      `json:"type"`
		Title      string      `json:"title"`
		Datasource *mixinDSRef `json:"datasource"`
		Targets    []struct {
			Expr       string      `json:"expr"`
			RefID      string      `json:"refId"`
			Datasource *mixinDSRef `json:"datasource"`
		} `json:"targets"`
	} `json:"panels"`
}

type mixinDSRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// mixinDashboardJSON is the dashboard as the dashboards.jsonnet entrypoint
// writes it (one JSON file per dashboard).
func mixinDashboardJSON(t *testing.T) map[string]string {
	t.Helper()
	files, err := mixinVM().EvaluateFileMulti(filepath.Join("mixin", "dashboards.jsonnet"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestMixinDashboardIsGrafanaJSONOnTheTemplatedDatasource(t *testing.T) {
	files := mixinDashboardJSON(t)
	if diff := cmp.Diff([]string{"nginx-operator.json"}, mixinKeys(files)); diff != "" {
		t.Fatalf("dashboard files (-want +got):\n%s", diff)
	}
	var d mixinDashboard
	if err := json.Unmarshal([]byte(files["nginx-operator.json"]), &d); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	if d.UID == "" {
		t.Error("dashboard has no uid: Grafana would duplicate it on every provisioning")
	}
	want := mixinDSRef{Type: "prometheus", UID: "${datasource}"}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
		if v.Type == "query" && (v.Datasource == nil || *v.Datasource != want) {
			t.Errorf("variable %s: datasource %+v, want %+v", v.Name, v.Datasource, want)
		}
	}
	if vars["datasource"] != "datasource" {
		t.Fatalf("no templated datasource variable: %v", vars)
	}
	ids := map[int]string{}
	queries := 0
	for _, p := range d.Panels {
		if prev, dup := ids[p.ID]; dup || p.ID == 0 {
			t.Errorf("panel %q: id %d missing or already used by %q", p.Title, p.ID, prev)
		}
		ids[p.ID] = p.Title
		if p.Type == "row" {
			continue // rows group panels and run no query
		}
		if p.Datasource == nil || *p.Datasource != want {
			t.Errorf("panel %q: datasource %+v, want %+v", p.Title, p.Datasource, want)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		refIDs := map[string]bool{}
		for _, tg := range p.Targets {
			queries++
			if tg.Datasource == nil || *tg.Datasource != want {
				t.Errorf("panel %q query %s: datasource %+v, want %+v", p.Title, tg.RefID, tg.Datasource, want)
			}
			if tg.Expr == "" || refIDs[tg.RefID] {
				t.Errorf("panel %q: empty expression or duplicate refId %q", p.Title, tg.RefID)
			}
			refIDs[tg.RefID] = true
		}
	}
	if queries == 0 {
		t.Fatal("dashboard has no queries")
	}
}

var (
	mixinStringLiteral = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	mixinIdentifier    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
)

// mixinCheckedMetrics lists the names in a PromQL expression that start
// with nginx_operator_ or controller_runtime_: string literals (label values,
// which may name anything) are dropped first, and recorded series
// (level:metric:ops) start with their level, so only raw metrics remain.
func mixinCheckedMetrics(expr string) []string {
	var names []string
	for _, id := range mixinIdentifier.FindAllString(mixinStringLiteral.ReplaceAllString(expr, `""`), -1) {
		if strings.HasPrefix(id, "nginx_operator_") || strings.HasPrefix(id, "controller_runtime_") {
			names = append(names, id)
		}
	}
	return names
}

func TestMixinCheckedMetricsFindsMetricNamesOnly(t *testing.T) {
	tests := map[string]struct {
		expr string
		want []string
	}{
		"selector and histogram series": {
			expr: `histogram_quantile(0.99, sum by (le) (rate(controller_runtime_reconcile_time_seconds_bucket{job="x"}[5m]))) / nginx_operator_reconcile_errors_total`,
			want: []string{"controller_runtime_reconcile_time_seconds_bucket", "nginx_operator_reconcile_errors_total"},
		},
		"a renamed or removed metric is reported as written": {
			expr: `rate(nginx_operator_reconciles_total[5m]) / rate(controller_runtime_reconcile_count[5m])`,
			want: []string{"nginx_operator_reconciles_total", "controller_runtime_reconcile_count"},
		},
		"label values and recorded series are not metrics": {
			expr: `controller:nginx_operator_reconcile_errors:ratio_rate5m{name="nginx_operator_lease",job='controller_runtime_x'}`,
		},
		"other metrics are not checked": {
			expr: `sum by (name) (workqueue_depth{job="x"}) and on () leader_election_master_status`,
		},
		"grafana label_values query": {
			expr: `label_values(nginx_operator_instance_available{job="nginx-operator"}, namespace)`,
			want: []string{"nginx_operator_instance_available"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, mixinCheckedMetrics(tc.expr)); diff != "" {
				t.Errorf("mixinCheckedMetrics(%s) (-want +got):\n%s", tc.expr, diff)
			}
		})
	}
}

// mixinExpressions is every PromQL expression of the mixin, by where it is:
// alerts, recording rules, dashboard panels and variables.
func mixinExpressions(t *testing.T) map[string]string {
	t.Helper()
	alerts, rules := mixinAlertsAndRules(t)
	exprs := map[string]string{}
	for _, gs := range []mixinRuleGroups{alerts, rules} {
		for _, g := range gs.Groups {
			for _, r := range g.Rules {
				exprs[g.Name+"/"+r.Alert+r.Record] = r.Expr
			}
		}
	}
	var d mixinDashboard
	if err := json.Unmarshal([]byte(mixinDashboardJSON(t)["nginx-operator.json"]), &d); err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			exprs["dashboard/"+p.Title+"/"+tg.RefID] = tg.Expr
		}
	}
	for _, v := range d.Templating.List {
		exprs["dashboard/variable "+v.Name] = string(v.Query)
	}
	return exprs
}

// TestMixinExpressionsUseOnlyExportedOperatorMetrics catches an alert, rule
// or panel querying an operator or controller-runtime metric that does not
// exist (a typo, a rename in pkg/metrics, or a metric the operator now leaves
// to controller-runtime): such an expression would silently match nothing.
func TestMixinExpressionsUseOnlyExportedOperatorMetrics(t *testing.T) {
	exprs := mixinExpressions(t)
	used := map[string]bool{}
	for where, expr := range exprs {
		for _, m := range mixinCheckedMetrics(expr) {
			used[m] = true
			if strings.HasPrefix(m, "controller_runtime_") {
				if _, ok := mixinControllerRuntimeFamily(m); !ok {
					t.Errorf("%s uses %s, which is not a controller-runtime metric the mixin knows: %s", where, m, expr)
				}
			} else if !mixinExportedOperatorMetrics[m] {
				t.Errorf("%s uses %s, which the operator does not export: %s", where, m, expr)
			}
		}
	}
	// Every operator metric a user would look at appears somewhere, so the
	// mixin keeps up when the operator adds one to the list above.
	for m, exported := range mixinExportedOperatorMetrics {
		if exported && !used[m] && !strings.HasSuffix(m, "_sum") && !strings.HasSuffix(m, "_count") {
			t.Errorf("%s is exported but no alert, rule or panel uses it", m)
		}
	}
	// The reconcile counts, durations and error ratios come from
	// controller-runtime.
	for _, m := range []string{"controller_runtime_reconcile_total", "controller_runtime_reconcile_time_seconds_bucket"} {
		if !used[m] {
			t.Errorf("no alert, rule or panel uses %s", m)
		}
	}
}

// reloaderExportedMetrics are the metric names the nginx-reloader serves:
// the "# TYPE" lines of its exposition.
func reloaderExportedMetrics() map[string]bool {
	names := map[string]bool{}
	for _, line := range strings.Split(string(reloader.New(reloader.Options{}).Metrics()), "\n") {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			names[strings.Fields(rest)[0]] = true
		}
	}
	return names
}

// histogramFamily is the family of a histogram's _bucket series.
func histogramFamily(series string) string {
	family, _ := strings.CutSuffix(series, "_bucket")
	return family
}

// TestMixinReloaderExpressionsUseTheReloadersMetricsAndJobs: every reloader_*
// and nginx_route_* (request metrics) metric an alert, rule or panel
// queries is one the nginx-reloader serves,
// and is selected with nginxReloaderSelector. prometheus-operator's
// config-reloader exports the same names, so a reloader_* query without the
// selector would count its failures as nginx's.
func TestMixinReloaderExpressionsUseTheReloadersMetricsAndJobs(t *testing.T) {
	exported := reloaderExportedMetrics()
	if !exported["reloader_last_reload_successful"] || !exported["reloader_config_info"] {
		t.Fatalf("the reloader's exposition lacks the metrics this test expects: %v", exported)
	}
	var selector string
	mixinEval(t, "(import 'nginx-operator/mixin/mixin.libsonnet')._config.nginxReloaderSelector", &selector)
	used := map[string]bool{}
	for where, expr := range mixinExpressions(t) {
		var names []string
		for _, id := range mixinIdentifier.FindAllString(mixinStringLiteral.ReplaceAllString(expr, `""`), -1) {
			if strings.HasPrefix(id, "reloader_") || strings.HasPrefix(id, "nginx_route_") {
				names = append(names, id)
			}
		}
		for _, m := range names {
			used[m] = true
			if !exported[m] && !exported[histogramFamily(m)] {
				t.Errorf("%s uses %s, which the nginx-reloader does not export: %s", where, m, expr)
			}
			if strings.Count(expr, m+"{"+selector) != strings.Count(expr, m) {
				t.Errorf("%s queries %s without the selector %s: %s", where, m, selector, expr)
			}
		}
	}
	for _, m := range []string{"reloader_last_reload_successful", "reloader_reloads_total", "reloader_reloads_failed_total", "reloader_config_info",
		"nginx_route_requests_total", "nginx_route_request_duration_seconds_bucket", "nginx_route_upstream_duration_seconds_bucket"} {
		if !used[m] {
			t.Errorf("no alert, rule or panel uses %s", m)
		}
	}
}

// TestMixinSelectorsTellExporterJobsFromReloaderJobs: an NginxMonitor
// scrapes each pod twice, the exporter in job JobName and the reloader in
// job ReloaderJobName. nginxSelector must select the first only (an
// up-based expression on it would otherwise count every pod twice) and
// nginxReloaderSelector the second only, for any namespace and monitor name.
func TestMixinSelectorsTellExporterJobsFromReloaderJobs(t *testing.T) {
	jobRegex := func(key string) *regexp.Regexp {
		t.Helper()
		var selector string
		mixinEval(t, "(import 'nginx-operator/mixin/mixin.libsonnet')._config."+key, &selector)
		m := regexp.MustCompile(`^job=~"(.*)"$`).FindStringSubmatch(selector)
		if m == nil {
			t.Fatalf("the mixin's %s %q is not a job regex", key, selector)
		}
		// PromQL anchors label regexes at both ends.
		return regexp.MustCompile("^(?:" + m[1] + ")$")
	}
	exporterJobs, reloaderJobs := jobRegex("nginxSelector"), jobRegex("nginxReloaderSelector")
	for _, m := range [][2]string{{"team-a", "web"}, {"team-a", "reloader"}, {"reloader", "reloader"}, {"monitoring", "all.teams"}} {
		exporter, reloaderJob := monitor.JobName(m[0], m[1]), monitor.ReloaderJobName(m[0], m[1])
		if !exporterJobs.MatchString(exporter) || reloaderJobs.MatchString(exporter) {
			t.Errorf("exporter job %q: nginxSelector matches %v (want true), nginxReloaderSelector %v (want false)",
				exporter, exporterJobs.MatchString(exporter), reloaderJobs.MatchString(exporter))
		}
		if !reloaderJobs.MatchString(reloaderJob) || exporterJobs.MatchString(reloaderJob) {
			t.Errorf("reloader job %q: nginxReloaderSelector matches %v (want true), nginxSelector %v (want false)",
				reloaderJob, reloaderJobs.MatchString(reloaderJob), exporterJobs.MatchString(reloaderJob))
		}
	}
	for _, other := range []string{"nginx-operator", "prometheus-k8s", "serviceMonitor/team-a/web/1"} {
		if exporterJobs.MatchString(other) || reloaderJobs.MatchString(other) {
			t.Errorf("job %q is not an NginxMonitor's, but a selector matches it", other)
		}
	}
}

// TestMixinControllerRuntimeMetricsAreServed checks that the controller-runtime
// version the operator is built with registers every controller_runtime_*
// family the mixin may use in the registry the operator serves. A family
// vector has no series until a controller reconciles, so the test asks the
// registry whether the name is taken: registering a metric of that name
// fails exactly when it is.
func TestMixinControllerRuntimeMetricsAreServed(t *testing.T) {
	for _, family := range mixinKeys(mixinControllerRuntimeMetrics) {
		probe := prometheus.NewCounter(prometheus.CounterOpts{Name: family, Help: "probe of mixin_test.go"})
		if err := ctrlmetrics.Registry.Register(probe); err == nil {
			ctrlmetrics.Registry.Unregister(probe)
			t.Errorf("controller-runtime does not register %s", family)
		}
	}
	// The probe tells a served name from one that is not.
	probe := prometheus.NewCounter(prometheus.CounterOpts{Name: "controller_runtime_mixin_test_probe_total", Help: "probe of mixin_test.go"})
	if err := ctrlmetrics.Registry.Register(probe); err != nil {
		t.Fatalf("registering an unused name: %v", err)
	}
	ctrlmetrics.Registry.Unregister(probe)
}

func mixinKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

type mixinObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec json.RawMessage   `json:"spec"`
	Data map[string]string `json:"data"`
}

// TestMixinMonitoringStackExampleComposesOperatorAndMixin renders the
// kube-prometheus style example with the jsonnet/ directory as library path
// and checks it installs the operator and all of its monitoring.
func TestMixinMonitoringStackExampleComposesOperatorAndMixin(t *testing.T) {
	out, err := mixinVM().EvaluateFile(filepath.Join("..", "examples", "monitoring-stack.jsonnet"))
	if err != nil {
		t.Fatalf("rendering the example: %v", err)
	}
	var list struct {
		APIVersion string        `json:"apiVersion"`
		Kind       string        `json:"kind"`
		Items      []mixinObject `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	if list.APIVersion != "v1" || list.Kind != "List" {
		t.Fatalf("example renders %s %s, want a v1 List", list.APIVersion, list.Kind)
	}
	alerts, _ := mixinAlertsAndRules(t)
	var wantAlerts []string
	for _, g := range alerts.Groups {
		for _, r := range g.Rules {
			wantAlerts = append(wantAlerts, r.Alert)
		}
	}
	sort.Strings(wantAlerts)
	dashboards := mixinDashboardJSON(t)

	kinds := map[string]int{}
	for _, o := range list.Items {
		kinds[o.APIVersion+" "+o.Kind]++
		switch {
		case o.Kind == "Deployment":
			var spec struct {
				Replicas int `json:"replicas"`
			}
			if err := json.Unmarshal(o.Spec, &spec); err != nil {
				t.Fatal(err)
			}
			if o.Metadata.Namespace != "nginx-operator" || spec.Replicas != 2 {
				t.Errorf("operator Deployment %s/%s with %d replicas, want namespace nginx-operator and the 2 replicas asked for", o.Metadata.Namespace, o.Metadata.Name, spec.Replicas)
			}
		case o.Kind == "PrometheusRule":
			var spec mixinRuleGroups
			if err := json.Unmarshal(o.Spec, &spec); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, g := range spec.Groups {
				for _, r := range g.Rules {
					if r.Alert != "" {
						got = append(got, r.Alert)
					}
				}
			}
			sort.Strings(got)
			if diff := cmp.Diff(wantAlerts, got); diff != "" {
				t.Errorf("PrometheusRule alerts (-mixin +example):\n%s", diff)
			}
		case o.Kind == "ServiceMonitor":
			var spec struct {
				Endpoints []struct {
					HonorLabels bool `json:"honorLabels"`
					Relabelings []struct {
						TargetLabel string `json:"targetLabel"`
						Replacement string `json:"replacement"`
					} `json:"relabelings"`
				} `json:"endpoints"`
			}
			if err := json.Unmarshal(o.Spec, &spec); err != nil {
				t.Fatal(err)
			}
			// The mixin's default selector is job="nginx-operator", and its
			// alerts need the operator's own namespace label.
			for _, e := range spec.Endpoints {
				job := ""
				for _, r := range e.Relabelings {
					if r.TargetLabel == "job" {
						job = r.Replacement
					}
				}
				if !e.HonorLabels || job != "nginx-operator" {
					t.Errorf("operator ServiceMonitor endpoint: honorLabels %v and job %q, want true and nginx-operator", e.HonorLabels, job)
				}
			}
		case o.Kind == "ConfigMap" && o.Metadata.Labels["grafana_dashboard"] == "1":
			kinds["grafana dashboard ConfigMap"]++
			for name, want := range dashboards {
				var w, g any
				if err := json.Unmarshal([]byte(want), &w); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal([]byte(o.Data[name]), &g); err != nil {
					t.Errorf("dashboard ConfigMap key %s: %v", name, err)
					continue
				}
				if diff := cmp.Diff(w, g); diff != "" {
					t.Errorf("dashboard ConfigMap key %s differs from the mixin (-mixin +example):\n%s", name, diff)
				}
			}
		}
	}
	for _, k := range []string{
		"apps/v1 Deployment",
		"monitoring.coreos.com/v1 PrometheusRule",
		"monitoring.coreos.com/v1 ServiceMonitor",
		"grafana dashboard ConfigMap",
		"nginx.operator.dev/v1beta1 NginxMonitor",
	} {
		if kinds[k] == 0 {
			t.Errorf("example has no %s; it has %v", k, kinds)
		}
	}
}

// TestMixinMonitoringStackExampleScrapesTheTeamMonitor: the example's
// Prometheus is kube-prometheus's (monitoring/prometheus-k8s), which loads
// every ServiceMonitor but no additionalScrapeConfigs, and may discover
// targets only in the namespaces it has a Role in. So each NginxMonitor of
// the example must have its ServiceMonitor enabled, and the example must let
// prometheus-k8s discover endpoints in the monitor's namespace. Its targets'
// job (the monitor's scrape job name) must be one the mixin's nginxSelector
// selects.
func TestMixinMonitoringStackExampleScrapesTheTeamMonitor(t *testing.T) {
	out, err := mixinVM().EvaluateFile(filepath.Join("..", "examples", "monitoring-stack.jsonnet"))
	if err != nil {
		t.Fatalf("rendering the example: %v", err)
	}
	type rule struct {
		APIGroups []string `json:"apiGroups"`
		Resources []string `json:"resources"`
		Verbs     []string `json:"verbs"`
	}
	var list struct {
		Items []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
			Spec struct {
				ServiceMonitor struct {
					Enabled bool `json:"enabled"`
				} `json:"serviceMonitor"`
			} `json:"spec"`
			Rules   []rule `json:"rules"`
			RoleRef struct {
				Kind string `json:"kind"`
				Name string `json:"name"`
			} `json:"roleRef"`
			Subjects []struct {
				Kind      string `json:"kind"`
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"subjects"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	var nginxSelector string
	mixinEval(t, "(import 'nginx-operator/mixin/mixin.libsonnet')._config.nginxSelector", &nginxSelector)
	m := regexp.MustCompile(`^job=~"(.*)"$`).FindStringSubmatch(nginxSelector)
	if m == nil {
		t.Fatalf("the mixin's nginxSelector %q is not a job regex", nginxSelector)
	}
	jobRegex := regexp.MustCompile("^(?:" + m[1] + ")$")

	namespaces := map[string]bool{}
	roles := map[string][]rule{} // namespace/name
	bound := map[string]string{} // namespace -> Role bound to monitoring/prometheus-k8s
	for _, o := range list.Items {
		switch o.Kind {
		case "Namespace":
			namespaces[o.Metadata.Name] = true
		case "Role":
			roles[o.Metadata.Namespace+"/"+o.Metadata.Name] = o.Rules
		case "RoleBinding":
			for _, s := range o.Subjects {
				if s.Kind == "ServiceAccount" && s.Namespace == "monitoring" && s.Name == "prometheus-k8s" && o.RoleRef.Kind == "Role" {
					bound[o.Metadata.Namespace] = o.RoleRef.Name
				}
			}
		}
	}
	grants := func(rules []rule, group, resource string) bool {
		for _, r := range rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) &&
				slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch") {
				return true
			}
		}
		return false
	}
	monitors := 0
	for _, o := range list.Items {
		if o.Kind != "NginxMonitor" {
			continue
		}
		monitors++
		ns, name := o.Metadata.Namespace, o.Metadata.Name
		if !o.Spec.ServiceMonitor.Enabled {
			t.Errorf("NginxMonitor %s/%s: serviceMonitor is not enabled, and kube-prometheus's Prometheus loads no other configuration", ns, name)
		}
		if !namespaces[ns] {
			t.Errorf("NginxMonitor %s/%s: the example does not create its namespace", ns, name)
		}
		role, ok := bound[ns]
		if !ok {
			t.Errorf("NginxMonitor %s/%s: no RoleBinding in %s for monitoring/prometheus-k8s", ns, name, ns)
		}
		for _, gr := range [][2]string{{"discovery.k8s.io", "endpointslices"}, {"", "services"}, {"", "pods"}} {
			if ok && !grants(roles[ns+"/"+role], gr[0], gr[1]) {
				t.Errorf("Role %s/%s does not let prometheus-k8s list and watch %s", ns, role, gr[1])
			}
		}
		if job := monitor.JobName(ns, name); !jobRegex.MatchString(job) {
			t.Errorf("NginxMonitor %s/%s: its job %q is not selected by the mixin's %s", ns, name, job, nginxSelector)
		}
	}
	if monitors == 0 {
		t.Error("the example has no NginxMonitor")
	}
}
