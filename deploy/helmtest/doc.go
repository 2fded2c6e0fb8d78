// Package helmtest holds the tests of the Helm chart charts/pulka (helm lint,
// the rendered objects, the values schema, the CRD the operator generates,
// a server-side dry-run and a helm install and upgrade into a real
// kube-apiserver) and the generator of the chart's README from the comments
// of its values.yaml.
//
// The tests run the helm CLI: $PULKA_HELM when set (make test sets it), else
// the binary scripts/helm-bin.sh builds from the Go module proxy. The API
// server is envtest's, from $KUBEBUILDER_ASSETS or scripts/envtest-bins.sh.
package helmtest
