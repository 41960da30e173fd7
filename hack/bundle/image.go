package main

import (
	"fmt"

	"sigs.k8s.io/kustomize/api/resmap"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// operatorImageEnv names the operator's own image in its container, which
// the operator then deploys as the backup agent and the nginx-reloader
// (pkg/operator's OwnImageEnv): an install from another registry takes those
// from there too. Kustomize cannot copy an image into an environment
// variable after an overlay's images transformer has run, so every build of
// this command sets it from the final image.
const operatorImageEnv = "NGINX_OPERATOR_IMAGE"

// stampImage sets the operator container's image to image (unless empty)
// and NGINX_OPERATOR_IMAGE to the container's image. A build without the
// operator's Deployment (a component alone) is left as it is.
func stampImage(res resmap.ResMap, image string) error {
	for _, r := range res.Resources() {
		if r.GetKind() != "Deployment" || r.GetName() != operatorRoleName {
			continue
		}
		ctr, err := r.Pipe(kyaml.Lookup("spec", "template", "spec", "containers", "[name="+operatorContainer+"]"))
		if err != nil || ctr == nil {
			return fmt.Errorf("Deployment %s has no container %s: %v", r.GetName(), operatorContainer, err)
		}
		if image != "" {
			if err := ctr.PipeE(kyaml.SetField("image", kyaml.NewStringRNode(image))); err != nil {
				return err
			}
		}
		current, err := ctr.Pipe(kyaml.Get("image"))
		if err != nil || current == nil {
			return fmt.Errorf("the operator container has no image: %v", err)
		}
		env, err := ctr.Pipe(kyaml.LookupCreate(kyaml.MappingNode, "env", "[name="+operatorImageEnv+"]"))
		if err != nil {
			return err
		}
		return env.PipeE(kyaml.SetField("value", kyaml.NewStringRNode(kyaml.GetValue(current))))
	}
	return nil
}
