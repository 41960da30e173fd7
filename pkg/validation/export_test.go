package validation

import apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// CompileKeepingRulesOf compiles props with the CEL rules already compiled
// in s. It is for a schema that differs from s's only outside its
// x-kubernetes-validations: tests that remove one OpenAPI rule at a time
// would otherwise compile every CEL rule again for each case.
func CompileKeepingRulesOf(s *Schema, props *apiextensionsv1.JSONSchemaProps) (*Schema, error) {
	compiled, err := compileOpenAPI(props)
	if err != nil {
		return nil, err
	}
	compiled.cel = s.cel
	return compiled, nil
}
