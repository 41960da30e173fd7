package main

import (
	"fmt"

	"sigs.k8s.io/kustomize/api/resmap"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// operatorImageEnv names the operator's own image in its container, which
// the operator then deploys as the backup agent and the nginx-reloader
// (pkg/operator's OwnImageEnv, which the tests compare it with; a generator
// does not link the operator). config/manager copies its image there.
const operatorImageEnv = "NGINX_OPERATOR_IMAGE"

// stampImage sets the operator container's image to image, as a release
// names it, and NGINX_OPERATOR_IMAGE with it: kustomize's copy ran before.
func stampImage(res resmap.ResMap, image string) error {
	for _, r := range res.Resources() {
		if r.GetKind() != "Deployment" || r.GetName() != operatorRoleName {
			continue
		}
		ctr, err := r.Pipe(kyaml.Lookup("spec", "template", "spec", "containers", "[name="+operatorContainer+"]"))
		if err != nil || ctr == nil {
			return fmt.Errorf("Deployment %s has no container %s: %v", r.GetName(), operatorContainer, err)
		}
		if err := ctr.PipeE(kyaml.SetField("image", kyaml.NewStringRNode(image))); err != nil {
			return err
		}
		env, err := ctr.Pipe(kyaml.LookupCreate(kyaml.MappingNode, "env", "[name="+operatorImageEnv+"]"))
		if err != nil {
			return err
		}
		return env.PipeE(kyaml.SetField("value", kyaml.NewStringRNode(image)))
	}
	return fmt.Errorf("no Deployment %s to give the image %s", operatorRoleName, image)
}
