// Package structure holds the checks of the code's shape that a compiler
// does not make: which packages may import which (the layers), and how long
// a production function anywhere in the module (pkg/, cmd/, hack/, config/
// and test/'s helpers; generated code aside) may grow. `go test
// ./hack/structure` runs them; they are part of the unit tier.
package structure
