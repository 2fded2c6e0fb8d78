// Package v1alpha1 is the pulka.dev/v1alpha1 API of the operator: the
// RunnerPool, a set of table-runner pods the operator creates, sizes, drains
// and assigns tables to.
//
// +kubebuilder:object:generate=true
// +groupName=pulka.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "pulka.dev", Version: "v1alpha1"}

	// SchemeBuilder adds this API's types to a scheme. It is built from a
	// function rather than filled by init(), so importing the package has
	// no side effect.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &RunnerPool{}, &RunnerPoolList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
