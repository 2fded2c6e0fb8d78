// Package helmtest holds the tests of the Helm chart charts/pulka (helm lint,
// the rendered objects, the values schema, the CRD the operator generates,
// a server-side dry-run and a helm install and upgrade into a real
// kube-apiserver, and the operator run as the release configures it, with
// the release's RBAC alone), the check that every value is documented, and that the
// chart's README is what helm-docs renders from those comments.
//
// The tests run helm and helm-docs: $PULKA_HELM and $PULKA_HELM_DOCS when set
// (make test sets them), else the binaries scripts/helm-bin.sh builds from
// the Go module proxy. The API server is envtest's, from $KUBEBUILDER_ASSETS
// or scripts/envtest-bins.sh.
package helmtest
