package bench

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Result is one instance count's figures.
type Result struct {
	N int `json:"n"`
	// Date is when the result was measured (RFC 3339, UTC).
	Date string `json:"date"`
	// OperatorEnv is BENCH_OPERATOR_ENV, when set.
	OperatorEnv string `json:"operatorEnv,omitempty"`
	// FloorSeconds: the children created directly until every StatefulSet is ready.
	FloorSeconds float64 `json:"floorSeconds"`
	// OperatorSeconds: the instances created until every one is Available.
	OperatorSeconds float64 `json:"operatorSeconds"`
	Ratio           float64 `json:"ratio"`
	// FloorCreatedSeconds and OperatorCreatedSeconds: until every
	// StatefulSet existed. What follows is the cluster's work (pods
	// scheduled, started, reported), which the operator only waits for.
	FloorCreatedSeconds    float64 `json:"floorCreatedSeconds"`
	OperatorCreatedSeconds float64 `json:"operatorCreatedSeconds"`
	// ReconcileMillis is the mean time of a reconcile until convergence, and
	// QueueWaitMillis the mean time a request waited in the work queue for
	// a worker.
	ReconcileMillis float64 `json:"reconcileMillis"`
	QueueWaitMillis float64 `json:"queueWaitMillis"`
	// Requests of the operator, per instance, from its start to convergence
	// (client-go's rest_client_requests_total; writes include Events).
	WritesPerInstance float64 `json:"writesPerInstance"`
	ReadsPerInstance  float64 `json:"readsPerInstance"`
	// ReconcilesPerInstance the NginxOperator controller ran until
	// convergence: each one builds every child and compares it with the cache.
	ReconcilesPerInstance float64 `json:"reconcilesPerInstance"`
	// WritesByKind splits the writes per instance by "verb resource" (from
	// the apiserver's audit log).
	WritesByKind map[string]float64 `json:"writesByKind"`
	// CPUSeconds the operator used from the first instance to convergence.
	CPUSeconds float64 `json:"cpuSeconds"`
	// ControlPlaneCPUSeconds the cluster's processes (etcd, apiserver,
	// controller-manager, scheduler, kwok) used in the same time, and
	// FloorControlPlaneCPUSeconds in the floor's run: the difference is
	// what the operator's way of getting there cost the control plane.
	ControlPlaneCPUSeconds      float64 `json:"controlPlaneCPUSeconds"`
	FloorControlPlaneCPUSeconds float64 `json:"floorControlPlaneCPUSeconds"`
	// RSSMiB is the operator's resident memory at convergence, PeakRSSMiB
	// its high-water mark (VmHWM).
	RSSMiB     float64 `json:"rssMiB"`
	PeakRSSMiB float64 `json:"peakRSSMiB"`
	// RSSAnonMiB and RSSFileMiB split RSSMiB: anonymous memory (heap,
	// stacks, runtime), and the pages of the operator's binary it touched.
	RSSAnonMiB float64 `json:"rssAnonMiB"`
	RSSFileMiB float64 `json:"rssFileMiB"`
	// HeapLiveMiB is go_gc_heap_live_bytes at convergence; ...Unrelated after
	// the unrelated Secrets, StatefulSets and Services.
	HeapLiveMiB          float64 `json:"heapLiveMiB"`
	HeapLiveUnrelatedMiB float64 `json:"heapLiveUnrelatedMiB"`
	// RSSAnonUnrelatedMiB is RssAnon after the unrelated objects.
	RSSAnonUnrelatedMiB float64 `json:"rssAnonUnrelatedMiB"`
	HeapGrowthPercent   float64 `json:"heapGrowthPercent"`
	GCsDuringUnrelated  float64 `json:"gcsDuringUnrelated"`
	// ReconcilesDuringUnrelated: what the unrelated objects woke (none
	// should: no instance names them).
	ReconcilesDuringUnrelated float64 `json:"reconcilesDuringUnrelated"`
	// ResyncWrites is what a restarted operator wrote while reconciling every
	// instance again (ResyncReconciles reconciles).
	ResyncWrites     float64 `json:"resyncWrites"`
	ResyncReconciles float64 `json:"resyncReconciles"`
}

// Table renders results as a fixed-width text table with the goals.
func Table(results []Result) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%6s %9s %9s %6s %9s %8s %6s %7s %8s %8s %7s %7s %7s %7s %8s %8s %7s\n",
		"N", "floor s", "oper. s", "ratio", "writes/i", "reads/i", "rec/i", "CPU s", "cp floor", "cp oper.", "RSS Mi", "anon", "file", "heap Mi", "+unrel.", "growth", "resync")
	for _, r := range results {
		fmt.Fprintf(&sb, "%6d %9.1f %9.1f %6.2f %9.2f %8.2f %6.1f %7.1f %8.1f %8.1f %7.1f %7.1f %7.1f %7.1f %8.1f %7.1f%% %7.0f\n",
			r.N, r.FloorSeconds, r.OperatorSeconds, r.Ratio, r.WritesPerInstance, r.ReadsPerInstance, r.ReconcilesPerInstance,
			r.CPUSeconds, r.FloorControlPlaneCPUSeconds, r.ControlPlaneCPUSeconds, r.RSSMiB, r.RSSAnonMiB, r.RSSFileMiB, r.HeapLiveMiB, r.HeapLiveUnrelatedMiB, r.HeapGrowthPercent, r.ResyncWrites)
	}
	sb.WriteString("goals: ratio <= 1.3 at N=1000; writes/i <= 8; resync 0 writes; heap growth < 5%; RSS <= 50 MiB at N=1000\n")
	for _, r := range results {
		keys := make([]string, 0, len(r.WritesByKind))
		for k := range r.WritesByKind {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %.2f", k, r.WritesByKind[k]))
		}
		fmt.Fprintf(&sb, "N=%d every StatefulSet created after: floor %.1f s, operator %.1f s; a reconcile took %.0f ms and waited %.0f ms for a worker (means)\n",
			r.N, r.FloorCreatedSeconds, r.OperatorCreatedSeconds, r.ReconcileMillis, r.QueueWaitMillis)
		fmt.Fprintf(&sb, "N=%d writes per instance: %s\n", r.N, strings.Join(parts, ", "))
		fmt.Fprintf(&sb, "N=%d unrelated objects: heap +%.1f MiB, anonymous memory +%.1f MiB, %.0f reconciles\n",
			r.N, r.HeapLiveUnrelatedMiB-r.HeapLiveMiB, r.RSSAnonUnrelatedMiB-r.RSSAnonMiB, r.ReconcilesDuringUnrelated)
	}
	return sb.String()
}

// resultsDoc is performance.json.
type resultsDoc struct {
	GoVersion             string   `json:"goVersion"`
	CPUs                  int      `json:"cpus"`
	ControllerManagerArgs []string `json:"controllerManagerArgs"`
	Results               []Result `json:"results"`
}

// WriteResults writes performance.json and performance.svg into dir. The
// results of an earlier run for other counts N are kept (each result has its
// date), so a slow machine can run the counts one at a time.
func WriteResults(dir string, results []Result) error {
	path := filepath.Join(dir, "performance.json")
	var old resultsDoc
	if data, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(data, &old)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	for i := range results {
		results[i].Date = now
		results[i].OperatorEnv = os.Getenv("BENCH_OPERATOR_ENV")
	}
	for _, r := range old.Results {
		if !slices.ContainsFunc(results, func(n Result) bool { return n.N == r.N }) {
			results = append(results, r)
		}
	}
	slices.SortFunc(results, func(a, b Result) int { return a.N - b.N })
	doc := resultsDoc{runtime.Version(), runtime.NumCPU(), controllerManagerArgs, results}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "performance.svg"), []byte(SVG(results)), 0o644)
}

// SVG draws, per N, the floor's and the operator's convergence time as bars
// (left) and the operator's writes per instance and RSS (right).
func SVG(results []Result) string {
	const w, h, top, bottom, left = 760, 320, 40, 50, 60
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&sb, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	panel := func(x0, pw int, title, unit string, series []string, colors []string, val func(Result, int) float64, goal func(Result) float64) {
		fmt.Fprintf(&sb, `<text x="%d" y="20" font-weight="bold">%s</text>`+"\n", x0, html.EscapeString(title))
		maxV := 0.0
		for _, r := range results {
			for i := range series {
				maxV = max(maxV, val(r, i))
			}
			if goal != nil {
				maxV = max(maxV, goal(r))
			}
		}
		if maxV == 0 {
			maxV = 1
		}
		maxV *= 1.1
		ph := h - top - bottom
		y := func(v float64) float64 { return float64(top) + float64(ph)*(1-v/maxV) }
		fmt.Fprintf(&sb, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", x0, top, x0, top+ph)
		fmt.Fprintf(&sb, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", x0, top+ph, x0+pw, top+ph)
		for t := 0; t <= 4; t++ {
			v := maxV * float64(t) / 4
			fmt.Fprintf(&sb, `<text x="%d" y="%.1f" text-anchor="end">%.3g</text>`+"\n", x0-4, y(v)+4, v)
			fmt.Fprintf(&sb, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", x0+1, y(v), x0+pw, y(v))
		}
		fmt.Fprintf(&sb, `<text x="%d" y="%d" transform="rotate(-90 %d %d)" text-anchor="middle">%s</text>`+"\n", x0-45, top+ph/2, x0-45, top+ph/2, html.EscapeString(unit))
		group := float64(pw) / float64(max(len(results), 1))
		bar := group * 0.7 / float64(len(series))
		for gi, r := range results {
			gx := float64(x0) + group*float64(gi) + group*0.15
			for i := range series {
				v := val(r, i)
				fmt.Fprintf(&sb, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", gx+bar*float64(i), y(v), bar-2, y(0)-y(v), colors[i])
				fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10">%.3g</text>`+"\n", gx+bar*float64(i)+bar/2, y(v)-3, v)
			}
			if goal != nil {
				g := goal(r)
				fmt.Fprintf(&sb, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="red" stroke-dasharray="4 3"/>`+"\n", gx, y(g), gx+bar*float64(len(series)), y(g))
			}
			fmt.Fprintf(&sb, `<text x="%.1f" y="%d" text-anchor="middle">N=%d</text>`+"\n", gx+bar*float64(len(series))/2, top+ph+16, r.N)
		}
		for i, s := range series {
			lx := x0 + 10 + i*110
			fmt.Fprintf(&sb, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", lx, h-18, colors[i], lx+14, h-9, html.EscapeString(s))
		}
	}
	panel(left, 300, "Time to converge (red: 1.3× floor)", "seconds", []string{"floor", "operator"}, []string{"#9aa", "#2a6"},
		func(r Result, i int) float64 { return []float64{r.FloorSeconds, r.OperatorSeconds}[i] },
		func(r Result) float64 { return 1.3 * r.FloorSeconds })
	panel(left+370, 300, "Operator: writes/instance (goal 8), RSS MiB (goal 50)", "writes / MiB", []string{"writes/inst.", "RSS MiB"}, []string{"#46c", "#c84"},
		func(r Result, i int) float64 { return []float64{r.WritesPerInstance, r.RSSMiB}[i] }, nil)
	sb.WriteString("</svg>\n")
	return sb.String()
}
