package jobs

import (
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	nvalidation "github.com/nginx-operator/nginx-operator/pkg/validation"
	"github.com/nginx-operator/nginx-operator/test/framework"
)

// testBackup and testInstance are objects as the controller hands them to
// the builders: with the CRDs' defaults.
func testBackup(name string) *v1beta1.NginxBackup {
	return defaulted("NginxBackup", &v1beta1.NginxBackup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", UID: "uid-b"},
		Spec: v1beta1.NginxBackupSpec{
			Instance: "web",
			Destination: v1beta1.Destination{S3: &v1beta1.S3Destination{
				Endpoint: "s3.example.com:9000", Bucket: "backups", Prefix: "/nightly/", Region: "eu-1", Insecure: true, CredentialsSecret: "s3-creds",
			}},
		},
	})
}

func testInstance(pvc bool) *v1beta1.NginxOperator {
	n := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"}}
	n.Status.ConfigHash = "0123456789abcdef"
	if pvc {
		n.Spec.Content.VolumeClaimTemplate = &v1beta1.VolumeClaimTemplate{Size: resource.MustParse("1Gi")}
		n.Spec.Pod.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
	}
	return defaulted("NginxOperator", n)
}

func defaulted[T any](kind string, obj *T) *T {
	out, err := nvalidation.Defaulted(kind, obj)
	if err != nil {
		panic(err)
	}
	return out
}

func testFacts(instance *v1beta1.NginxOperator) Facts {
	return Facts{
		Instance: instance, AgentImage: "ghcr.io/nginx-operator/operator:v1", InstanceImage: "nginx:1.27",
		InstanceSpec: []byte(`{"image":"nginx:1.27"}`), OperatorVersion: "v1.2.3",
	}
}

func pod(j *batchv1.Job) corev1.PodSpec { return j.Spec.Template.Spec }

func volume(p corev1.PodSpec, name string) *corev1.Volume {
	for i := range p.Volumes {
		if p.Volumes[i].Name == name {
			return &p.Volumes[i]
		}
	}
	return nil
}

func mount(c corev1.Container, name string) *corev1.VolumeMount {
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].Name == name {
			return &c.VolumeMounts[i]
		}
	}
	return nil
}

func env(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// TestPodsPassTheRestrictedPodSecurityStandard checks every rule of the
// restricted profile that a pod template controls, for each kind of run.
func TestPodsPassTheRestrictedPodSecurityStandard(t *testing.T) {
	pvcBackup := testBackup("b")
	pvcBackup.Spec.Destination = v1beta1.Destination{PVC: &v1beta1.PVCDestination{ClaimName: "backups"}}
	for name, template := range map[string]corev1.PodTemplateSpec{
		"s3 job with content":     Job(testBackup("b"), testFacts(testInstance(true))).Spec.Template,
		"pvc job without content": Job(pvcBackup, testFacts(testInstance(false))).Spec.Template,
		"cronjob":                 CronJob(testBackup("b"), testFacts(testInstance(true))).Spec.JobTemplate.Spec.Template,
	} {
		t.Run(name, func(t *testing.T) {
			pod := template.Spec
			for _, v := range framework.RestrictedViolations(pod) {
				t.Error(v)
			}
			if ptr.Deref(pod.SecurityContext.RunAsUser, 0) == 0 {
				t.Error("the agent runs as root")
			}
			for _, c := range append(pod.InitContainers, pod.Containers...) {
				if len(c.Ports) > 0 {
					t.Errorf("container %s exposes ports %v", c.Name, c.Ports)
				}
				if m := mount(c, tmpVolume); m == nil || m.MountPath != "/tmp" || env(c, "TMPDIR") == nil || env(c, "TMPDIR").Value != "/tmp" {
					t.Errorf("container %s: want TMPDIR=/tmp on an emptyDir", c.Name)
				}
			}
			if v := volume(pod, tmpVolume); v == nil || v.EmptyDir == nil {
				t.Errorf("tmp volume %+v, want an emptyDir", v)
			}
		})
	}
}

func TestJobArgsAndVolumes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		mutate      func(*v1beta1.NginxBackup)
		instance    *v1beta1.NginxOperator
		wantArgs    []string
		notArgs     []string
		wantVolumes []string
		notVolumes  []string
		colocated   bool
	}{{
		name:     "s3 with persistent content",
		instance: testInstance(true),
		wantArgs: []string{"backup", "--namespace=team-a", "--instance=web", "--s3-endpoint=s3.example.com:9000", "--s3-bucket=backups",
			"--s3-region=eu-1", "--s3-insecure", "--prefix=nightly", "--config-dir=" + configMountPath, "--content-dir=" + contentPath,
			"--image=nginx:1.27", "--spec-file=" + podInfoPath + "/" + specFileName, "--operator-version=v1.2.3"},
		notArgs:     []string{"--pvc-path", "--keep-last"},
		wantVolumes: []string{configVolume, contentVolume, podInfoVolume, tmpVolume},
		notVolumes:  []string{destinationVolume},
		colocated:   true,
	}, {
		name: "pvc destination, retention, no persistent content",
		mutate: func(b *v1beta1.NginxBackup) {
			b.Spec.Destination = v1beta1.Destination{PVC: &v1beta1.PVCDestination{ClaimName: "backups", Path: "nginx/"}}
			b.Spec.Retention.KeepLast = 7
		},
		instance:    testInstance(false),
		wantArgs:    []string{"--pvc-path=" + destinationPath, "--prefix=nginx", "--keep-last=7", "--config-dir=" + configMountPath},
		notArgs:     []string{"--s3-endpoint", "--content-dir", "--s3-insecure"},
		wantVolumes: []string{configVolume, destinationVolume},
		notVolumes:  []string{contentVolume},
	}, {
		name:        "content excluded",
		mutate:      func(b *v1beta1.NginxBackup) { b.Spec.Include.Content = ptr.To(false) },
		instance:    testInstance(true),
		wantArgs:    []string{"--config-dir=" + configMountPath},
		notArgs:     []string{"--content-dir"},
		notVolumes:  []string{contentVolume},
		wantVolumes: []string{configVolume},
	}, {
		name:        "config excluded",
		mutate:      func(b *v1beta1.NginxBackup) { b.Spec.Include.Config = ptr.To(false) },
		instance:    testInstance(true),
		wantArgs:    []string{"--content-dir=" + contentPath},
		notArgs:     []string{"--config-dir"},
		notVolumes:  []string{configVolume},
		wantVolumes: []string{contentVolume},
		colocated:   true,
	}, {
		name: "shared content volume needs no colocation",
		instance: func() *v1beta1.NginxOperator {
			n := testInstance(true)
			n.Spec.Content.VolumeClaimTemplate.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
			return n
		}(),
		wantArgs:    []string{"--content-dir=" + contentPath},
		wantVolumes: []string{contentVolume},
	}, {
		name: "instance scaled to zero: the volume is attached nowhere",
		instance: func() *v1beta1.NginxOperator {
			n := testInstance(true)
			n.Spec.Replicas = ptr.To[int32](0)
			return n
		}(),
		wantArgs:    []string{"--content-dir=" + contentPath},
		wantVolumes: []string{contentVolume},
	}, {
		name:       "unknown instance: no content",
		instance:   nil,
		notArgs:    []string{"--content-dir"},
		notVolumes: []string{contentVolume},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			b := testBackup("nightly")
			if tc.mutate != nil {
				tc.mutate(b)
			}
			in := testFacts(tc.instance)
			p := pod(Job(b, in))
			c := p.Containers[0]
			for _, a := range tc.wantArgs {
				if !slices.Contains(c.Args, a) {
					t.Errorf("args %v lack %s", c.Args, a)
				}
			}
			for _, a := range tc.notArgs {
				for _, got := range c.Args {
					if strings.HasPrefix(got, a) {
						t.Errorf("args %v have %s", c.Args, got)
					}
				}
			}
			if c.Args[0] != "backup" {
				t.Errorf("args %v do not start with the backup subcommand", c.Args)
			}
			for _, v := range tc.wantVolumes {
				if volume(p, v) == nil || mount(c, v) == nil {
					t.Errorf("volume %s not mounted", v)
				}
			}
			for _, v := range tc.notVolumes {
				if volume(p, v) != nil || mount(c, v) != nil {
					t.Errorf("volume %s mounted", v)
				}
			}
			if got := p.Affinity != nil; got != tc.colocated {
				t.Errorf("affinity %+v, want colocation %v", p.Affinity, tc.colocated)
			}
		})
	}
}

func TestContentIsPodZerosClaimReadOnlyOnItsNode(t *testing.T) {
	p := pod(Job(testBackup("nightly"), testFacts(testInstance(true))))
	v := volume(p, contentVolume)
	if v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "content-web-0" || !v.PersistentVolumeClaim.ReadOnly {
		t.Errorf("content volume %+v, want claim content-web-0 read-only", v)
	}
	if m := mount(p.Containers[0], contentVolume); m == nil || !m.ReadOnly {
		t.Errorf("content mount %+v, want read-only", m)
	}
	aff := p.Affinity
	if aff == nil || aff.PodAffinity == nil || len(aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Fatalf("affinity %+v, want one required pod affinity term", aff)
	}
	term := aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	if term.TopologyKey != corev1.LabelHostname || term.LabelSelector.MatchLabels[PodNameLabel] != "web-0" {
		t.Errorf("affinity term %+v, want pod web-0's node", term)
	}
	if len(p.Tolerations) != 1 || p.Tolerations[0].Key != "dedicated" {
		t.Errorf("tolerations %v, want the instance's", p.Tolerations)
	}
	cfg := volume(p, configVolume)
	if cfg == nil || cfg.Projected == nil || len(cfg.Projected.Sources) != 1 || cfg.Projected.Sources[0].Secret == nil ||
		cfg.Projected.Sources[0].Secret.Name != "web-nginx-config" || ptr.Deref(cfg.Projected.Sources[0].Secret.Optional, false) {
		t.Errorf("config volume %+v, want the required config Secret of the instance, web-nginx-config", cfg)
	}
	if m := mount(p.Containers[0], configVolume); m == nil || !m.ReadOnly || m.MountPath != configMountPath {
		t.Errorf("config mount %+v, want read-only at %s", m, configMountPath)
	}
}

func TestS3CredentialsComeFromTheSecret(t *testing.T) {
	c := pod(Job(testBackup("nightly"), testFacts(testInstance(false)))).Containers[0]
	for _, key := range []string{AccessKeyIDKey, SecretAccessKeyKey} {
		e := env(c, key)
		if e == nil || e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
			e.ValueFrom.SecretKeyRef.Name != "s3-creds" || e.ValueFrom.SecretKeyRef.Key != key || ptr.Deref(e.ValueFrom.SecretKeyRef.Optional, false) {
			t.Errorf("env %s = %+v, want required key %s of Secret s3-creds", key, e, key)
		}
	}
	if e := env(c, SessionTokenKey); e == nil || !ptr.Deref(e.ValueFrom.SecretKeyRef.Optional, false) {
		t.Errorf("env %s = %+v, want an optional Secret key", SessionTokenKey, e)
	}
	for _, a := range c.Args {
		if strings.Contains(a, "s3-creds") {
			t.Errorf("arg %q names the credentials", a)
		}
	}
	pvc := testBackup("nightly")
	pvc.Spec.Destination = v1beta1.Destination{PVC: &v1beta1.PVCDestination{ClaimName: "backups"}}
	if c := pod(Job(pvc, testFacts(nil))).Containers[0]; env(c, AccessKeyIDKey) != nil {
		t.Error("a pvc destination gets S3 credentials")
	}
}

func TestSpecTravelsAsAnAnnotationFile(t *testing.T) {
	tmpl := Job(testBackup("nightly"), testFacts(nil)).Spec.Template
	if got := tmpl.Annotations[SpecAnnotation]; got != `{"image":"nginx:1.27"}` {
		t.Errorf("spec annotation %q", got)
	}
	v := volume(tmpl.Spec, podInfoVolume)
	if v == nil || v.DownwardAPI == nil || len(v.DownwardAPI.Items) != 1 ||
		v.DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.annotations['"+SpecAnnotation+"']" {
		t.Errorf("podinfo volume %+v", v)
	}
	in := testFacts(nil)
	in.InstanceSpec = nil
	tmpl = Job(testBackup("nightly"), in).Spec.Template
	if volume(tmpl.Spec, podInfoVolume) != nil || tmpl.Annotations != nil {
		t.Error("no spec given, but a spec volume or annotation")
	}
}

func TestJobAndCronJobFields(t *testing.T) {
	b := testBackup("nightly")
	b.Spec.Schedule = "0 3 * * *"
	b.Spec.Suspend = true
	cj := CronJob(b, testFacts(nil))
	s := cj.Spec
	if s.Schedule != "0 3 * * *" || !ptr.Deref(s.Suspend, false) || s.ConcurrencyPolicy != batchv1.ForbidConcurrent ||
		ptr.Deref(s.SuccessfulJobsHistoryLimit, 0) != 3 || ptr.Deref(s.FailedJobsHistoryLimit, 0) != 3 ||
		ptr.Deref(s.StartingDeadlineSeconds, 0) <= 0 {
		t.Errorf("cronjob spec %+v", s)
	}
	b.Spec.Suspend = false
	if got := CronJob(b, testFacts(nil)).Spec.Suspend; got == nil || *got {
		t.Errorf("suspend %v, want an explicit false (so un-suspending is applied)", got)
	}
	j := Job(b, testFacts(nil))
	p := j.Spec.Template.Spec
	c := p.Containers[0]
	if p.RestartPolicy != corev1.RestartPolicyNever || ptr.Deref(j.Spec.BackoffLimit, -1) != BackoffLimit {
		t.Errorf("job restartPolicy %s backoffLimit %v", p.RestartPolicy, j.Spec.BackoffLimit)
	}
	if c.Name != ContainerName || c.Image != "ghcr.io/nginx-operator/operator:v1" ||
		c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError || c.TerminationMessagePath != "/dev/termination-log" {
		t.Errorf("container %+v", c)
	}
	if c.Resources.Limits.Memory().IsZero() {
		t.Error("no memory limit by default")
	}
	want := naming.Labels(AppName, "nightly", Component)
	for name, labels := range map[string]map[string]string{
		"job": j.Labels, "job pod": j.Spec.Template.Labels, "cronjob": cj.Labels,
		"cronjob job": cj.Spec.JobTemplate.Labels, "cronjob pod": cj.Spec.JobTemplate.Spec.Template.Labels,
	} {
		for k, v := range want {
			if labels[k] != v {
				t.Errorf("%s labels %v lack %s=%s", name, labels, k, v)
			}
		}
	}
	if j.Namespace != "team-a" || cj.Namespace != "team-a" || j.Name != "nightly-backup" || cj.Name != "nightly-backup" {
		t.Errorf("job %s/%s cronjob %s/%s", j.Namespace, j.Name, cj.Namespace, cj.Name)
	}
}

func TestNamesAndLabelsAreValidForLongNames(t *testing.T) {
	long := strings.Repeat("a", 200)
	other := strings.Repeat("a", 199) + "b"
	for _, name := range []string{"nightly", "web.example.com", long} {
		b := testBackup(name)
		b.Spec.Instance = name
		j, cj := Job(b, testFacts(nil)), CronJob(b, testFacts(nil))
		if errs := validation.IsDNS1123Label(j.Name); len(errs) > 0 {
			t.Errorf("job name %q: %v", j.Name, errs)
		}
		if errs := validation.IsDNS1123Label(cj.Name); len(errs) > 0 || len(cj.Name) > 52 {
			t.Errorf("cronjob name %q (%d chars): %v", cj.Name, len(cj.Name), errs)
		}
		for k, v := range j.Labels {
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				t.Errorf("label %s=%q: %v", k, v, errs)
			}
		}
		for _, v := range pod(j).Volumes {
			if errs := validation.IsDNS1123Label(v.Name); len(errs) > 0 {
				t.Errorf("volume name %q: %v", v.Name, errs)
			}
		}
	}
	if CronJobName(testBackup(long)) == CronJobName(testBackup(other)) || JobName(testBackup(long)) == JobName(testBackup(other)) {
		t.Error("two long names share a child name")
	}
}

func TestConfigIncludesTheContentConfigMapsUnderTheirNames(t *testing.T) {
	n := testInstance(false)
	n.Spec.Content.ConfigMaps = []v1beta1.ConfigMapContent{{Name: "site"}, {Name: "unread"}}
	in := testFacts(n)
	in.ConfigMapKeys = map[string][]string{"site": {"style.css", "index.html"}, "not-referenced": {"x"}}
	v := volume(pod(Job(testBackup("nightly"), in)), configVolume)
	if v == nil || v.Projected == nil || len(v.Projected.Sources) != 2 {
		t.Fatalf("config volume %+v, want the config Secret and one ConfigMap", v)
	}
	cm := v.Projected.Sources[1].ConfigMap
	want := []corev1.KeyToPath{{Key: "index.html", Path: "configmaps/site/index.html"}, {Key: "style.css", Path: "configmaps/site/style.css"}}
	if cm == nil || cm.Name != "site" || !slices.Equal(cm.Items, want) || !ptr.Deref(cm.Optional, false) {
		t.Errorf("ConfigMap projection %+v, want site's keys under configmaps/site/", cm)
	}
	if got := in.ConfigMapKeys["site"]; got[0] != "style.css" {
		t.Errorf("the builder sorted the caller's slice: %v", got)
	}
}

func TestReadWriteOncePodContentCannotBeSharedWhileNginxRuns(t *testing.T) {
	for _, tc := range []struct {
		name     string
		modes    []corev1.PersistentVolumeAccessMode
		replicas *int32
		want     bool
	}{
		{"ReadWriteOnce", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, nil, true},
		{"ReadWriteOncePod", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}, nil, false},
		{"ReadWriteOncePod scaled to zero", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}, ptr.To[int32](0), true},
		{"ReadWriteOncePod or ReadWriteMany", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteMany}, ptr.To[int32](2), true},
	} {
		n := testInstance(true)
		n.Spec.Content.VolumeClaimTemplate.AccessModes = tc.modes
		n.Spec.Replicas = tc.replicas
		if got := SharesContent(n); got != tc.want {
			t.Errorf("%s: SharesContent = %v, want %v", tc.name, got, tc.want)
		}
	}
}
