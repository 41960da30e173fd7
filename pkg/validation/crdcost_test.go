package validation

import (
	"context"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"sigs.k8s.io/yaml"

	"github.com/nginx-operator/nginx-operator/config/crd"
)

// The apiserver refuses a CRD whose rules it estimates to cost more than its
// budget (per rule and per CRD) or that do not compile. Each shipped CRD goes
// through the apiserver's own CRD validation here, so a rule that would make
// `kubectl create -f bundle.yaml` fail fails this unit test first.
func TestShippedCRDsPassTheAPIServersCRDValidation(t *testing.T) {
	files, err := crd.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		var v1 apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(f, &v1); err != nil {
			t.Fatal(err)
		}
		// A CRD the apiserver has stored records its storage version.
		for _, v := range v1.Spec.Versions {
			if v.Storage {
				v1.Status.StoredVersions = []string{v.Name}
			}
		}
		var internal apiextensions.CustomResourceDefinition
		if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&v1, &internal, nil); err != nil {
			t.Fatal(err)
		}
		if errs := apivalidation.ValidateCustomResourceDefinition(context.Background(), &internal); len(errs) > 0 {
			t.Errorf("%s: the apiserver would refuse it:\n%v", v1.Name, errs.ToAggregate())
		}
	}
}
