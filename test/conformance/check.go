package conformance

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// Outcome is how one of the suite's tests ended.
type Outcome string

const (
	Passed  Outcome = "passed"
	Failed  Outcome = "failed"
	Skipped Outcome = "skipped"
)

// Expected are the tests of profile that must pass when the features
// supported are claimed: its core tests (every feature a core feature of
// the profile) and its extended tests whose features are all core or
// claimed.
func Expected(profile suite.ConformanceProfile, all []suite.ConformanceTest, supported suite.FeaturesSet) (core, extended []suite.ConformanceTest) {
	for _, t := range all {
		isCore, inProfile := true, true
		for _, f := range t.Features {
			if !profile.CoreFeatures.Has(f) {
				isCore = false
				if !profile.ExtendedFeatures.Has(f) || !supported.Has(f) {
					inProfile = false
				}
			}
		}
		switch {
		case isCore:
			core = append(core, t)
		case inProfile:
			extended = append(extended, t)
		}
	}
	return core, extended
}

// Runnable are the tests the suite runs for the features supported: those
// whose features are all supported. The others the suite would only mark
// skipped as not supported, which the report leaves out; leaving them out
// of the run keeps the test output and hack/gotest's skip count to what
// was tested.
func Runnable(all []suite.ConformanceTest, supported suite.FeaturesSet) (run, notSupported []suite.ConformanceTest) {
	for _, t := range all {
		if supported.HasAll(t.Features...) {
			run = append(run, t)
		} else {
			notSupported = append(notSupported, t)
		}
	}
	return run, notSupported
}

// Check says what keeps profiles from passing: a core test, or an extended
// test of a claimed feature, that did not pass (outcomes, by test name;
// absent: did not run), with the features the failed extended tests rely
// on; and a profile the report does not give a success for core and
// extended tests. selected leaves out the tests a run was told not to run
// (the suite's -run-test and -skip-tests); nil selects every test. No
// problem: an empty list.
func Check(profiles []suite.ConformanceProfile, all []suite.ConformanceTest, supported suite.FeaturesSet,
	outcomes map[string]Outcome, report *confv1.ConformanceReport, selected func(name string) bool,
) []string {
	var problems []string
	for _, p := range profiles {
		core, extended := Expected(p, all, supported)
		if msg := notPassed(core, outcomes, selected, nil); msg != "" {
			problems = append(problems, fmt.Sprintf("%s core tests not passed: %s", p.Name, msg))
		}
		if msg := notPassed(extended, outcomes, selected, p.CoreFeatures); msg != "" {
			problems = append(problems, fmt.Sprintf("%s extended tests of claimed features not passed: %s", p.Name, msg))
		}
		if selected != nil {
			// A partial run: the report cannot say success.
			continue
		}
		problems = append(problems, reportProblems(p.Name, report)...)
	}
	return problems
}

// notPassed lists the tests of ts that did not pass, by outcome; for each,
// the features it relies on beyond core.
func notPassed(ts []suite.ConformanceTest, outcomes map[string]Outcome, selected func(string) bool, core sets.Set[features.FeatureName]) string {
	byOutcome := map[string][]string{}
	for _, t := range ts {
		if selected != nil && !selected(t.ShortName) {
			continue
		}
		o, ran := outcomes[t.ShortName]
		if ran && o == Passed {
			continue
		}
		what := "did not run"
		if ran {
			what = string(o)
		}
		name := t.ShortName
		if core != nil {
			var beyond []string
			for _, f := range t.Features {
				if !core.Has(f) {
					beyond = append(beyond, string(f))
				}
			}
			name += " (" + strings.Join(beyond, ", ") + ")"
		}
		byOutcome[what] = append(byOutcome[what], name)
	}
	var parts []string
	for _, what := range []string{string(Failed), string(Skipped), "did not run"} {
		if names := byOutcome[what]; len(names) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s: %s", len(names), what, strings.Join(names, ", ")))
		}
	}
	return strings.Join(parts, "; ")
}

// reportProblems says where the report does not give profile a success.
func reportProblems(profile suite.ConformanceProfileName, report *confv1.ConformanceReport) []string {
	if report == nil {
		return []string{"no report"}
	}
	i := slices.IndexFunc(report.ProfileReports, func(p confv1.ProfileReport) bool { return p.Name == string(profile) })
	if i < 0 {
		return []string{fmt.Sprintf("the report has no profile %s", profile)}
	}
	pr := report.ProfileReports[i]
	var problems []string
	if pr.Core.Result != confv1.Success {
		problems = append(problems, fmt.Sprintf("the report's %s core result is %q: %s", profile, pr.Core.Result, pr.Summary))
	}
	if pr.Extended != nil && pr.Extended.Result != confv1.Success {
		problems = append(problems, fmt.Sprintf("the report's %s extended result is %q: %s", profile, pr.Extended.Result, pr.Summary))
	}
	return problems
}

// FeatureNames lists fs sorted.
func FeatureNames(fs suite.FeaturesSet) []string {
	var names []string
	for f := range fs {
		names = append(names, string(f))
	}
	sort.Strings(names)
	return names
}
