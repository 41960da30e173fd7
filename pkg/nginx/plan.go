package nginx

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// plan is what should exist for one instance: its children, built from the
// validated spec and what its references hold. Planning writes nothing.
type plan struct {
	inputs Materials
	// upstreams are where nginx sends each proxied Service port, for the
	// status: read from the resolved model nginx.conf was rendered from.
	upstreams []v1beta1.UpstreamStatus
	// routing is what a Gateway's instance serves (status.routing); nil
	// for another instance.
	routing *v1beta1.RoutingStatus
	// children in the order they are applied: the StatefulSet last, so that
	// should a child's name be taken (see Applier.ApplyOwned), no pod starts
	// without the rest.
	children []client.Object
	// checked are the children the user's fields reach beyond what the CRD
	// can check (the StatefulSet's pod settings and resources, the
	// Service's, the PodDisruptionBudget's, the NetworkPolicy's): the API
	// server may refuse them.
	checked     []client.Object
	statefulSet *appsv1.StatefulSet
	// written is the StatefulSet as the API server answered its apply in
	// this reconcile; empty (no resourceVersion) when it was not written.
	written appsv1.StatefulSet
	// unwanted are the optional children the spec does not ask for, as
	// empty objects with their names: one the instance controls is deleted.
	unwanted []client.Object
	// unwantedFiles are the files Secrets that hold no file now, deleted
	// like unwanted but after the config Secret is written: a pod may
	// still load the configuration before, which names their files.
	unwantedFiles []client.Object
}

// plan validates nginx's spec, resolves what it references (resolve),
// renders nginx.conf from the spec and that model, and builds the
// children. Its errors are the spec's (InvalidConfig, a missing
// reference) or the cache's.
func (r *Reconciler) plan(ctx context.Context, nginx *v1beta1.NginxOperator) (*plan, error) {
	// Everything below builds from the spec as admission defaults it (the
	// CRD is the one source of defaults and value rules); the status is
	// written to the object as read.
	desired, routing, errs := r.validated(ctx, nginx)
	if len(errs) > 0 {
		err := configErrorf("%v", errs.ToAggregate())
		r.Recorder.Eventf(nginx, nil, corev1.EventTypeWarning, ReasonInvalidConfig, "Validate", "%v", err)
		return nil, err
	}
	model, err := r.resolve(ctx, desired)
	if err != nil {
		return nil, err
	}
	config, files, err := renderConfig(desired, model)
	if err != nil {
		r.Recorder.Eventf(nginx, nil, corev1.EventTypeWarning, ReasonInvalidConfig, "Render", "%v", err)
		return nil, err
	}
	image := desired.Spec.Image
	if image == "" {
		image = r.Images.Nginx
	}
	in := Materials{Config: config, ConfigHash: reloader.ConfigHash(config), Image: image, References: model.refs, ExporterImage: r.Images.Exporter,
		ReloaderImage: r.Images.Reloader, FilesHash: files.hash}
	if in.Restore, err = r.restoreInit(ctx, desired); err != nil {
		return nil, err
	}
	held, err := r.heldConfigSecret(ctx, nginx)
	if err != nil {
		return nil, err
	}
	if in.PushKey, err = r.pushKey(nginx, held); err != nil {
		return nil, err
	}
	in.Revision = configRevision(held, in.ConfigHash, time.Now())
	p := &plan{inputs: in, statefulSet: StatefulSet(desired, in), checked: []client.Object{Service(desired, model.ports)},
		upstreams: model.upstreamStatus(), routing: routing}
	names, meta := layout.NamesFor(nginx.Name), func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: nginx.Namespace, Name: name}
	}
	if pdb := PodDisruptionBudget(desired); pdb != nil {
		p.checked = append(p.checked, pdb)
	} else {
		p.unwanted = append(p.unwanted, &policyv1.PodDisruptionBudget{ObjectMeta: meta(names.PodDisruptionBudget)})
	}
	if policy := NetworkPolicy(desired, r.Operator); policy != nil {
		p.checked = append(p.checked, policy)
	} else {
		p.unwanted = append(p.unwanted, &networkingv1.NetworkPolicy{ObjectMeta: meta(names.NetworkPolicy)})
	}
	p.checked = append(p.checked, p.statefulSet)
	// The files Secrets before the config Secret: a pod may read the
	// configuration as soon as it is written, and waits for what it names.
	p.children = []client.Object{ServiceAccount(desired)}
	wantedFiles, unwantedFiles := filesSecrets(desired, files)
	for _, s := range wantedFiles {
		p.children = append(p.children, s)
	}
	for _, name := range unwantedFiles {
		p.unwantedFiles = append(p.unwantedFiles, &corev1.Secret{ObjectMeta: meta(name)})
	}
	p.children = append(append(p.children, ConfigSecret(desired, in), HeadlessService(desired)), p.checked...)
	return p, nil
}

// renderConfig renders nginx.conf of the validated instance from what
// resolve read, headed with the manifest of the files it names (each pod
// loads it once it has them, see pkg/reloader, and its hash changes with
// theirs), and lays those files out over the files Secrets. Its errors are
// the spec's (InvalidConfig).
func renderConfig(desired *v1beta1.NginxOperator, model *resolved) ([]byte, instanceFiles, error) {
	rendered, err := render.Config(&desired.Spec, model.renderOptions())
	if err != nil {
		// The emitter refuses an argument it cannot quote safely: the spec
		// is at fault, and retrying cannot help.
		return nil, instanceFiles{}, configErrorf("%v", err)
	}
	files, err := shardFiles(model.files)
	if err != nil {
		return nil, instanceFiles{}, err
	}
	config := reloader.WithManifest(rendered, files.manifest)
	if len(config) > layout.MaxConfigSize {
		// The apiserver would refuse the Secret, and say less.
		return nil, instanceFiles{}, configErrorf("the rendered nginx.conf is %d bytes, more than the %d a Secret carries: split the servers across instances (a Gateway: its routes across Gateways)",
			len(config), layout.MaxConfigSize)
	}
	return config, files, nil
}
