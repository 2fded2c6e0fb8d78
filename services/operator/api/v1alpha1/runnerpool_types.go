package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels and annotations the operator puts on the pods it creates.
const (
	// PoolLabel names the RunnerPool a runner pod belongs to.
	PoolLabel = "pulka.dev/pool"
	// TemplateHashLabel is the hash of the pod template a runner pod was
	// made from; a pod whose hash differs from the pool's is rolled.
	TemplateHashLabel = "pulka.dev/template-hash"
	// DrainingAnnotation marks a pod chosen for removal, with the time
	// (RFC 3339) the drain began: it takes no new tables, its tables move,
	// and it is deleted once it owns none or the drain timeout has passed.
	DrainingAnnotation = "pulka.dev/draining"
)

// Condition types of a RunnerPool.
const (
	// ConditionAvailable is true while at least MinRunners runners are ready.
	ConditionAvailable = "Available"
	// ConditionProgressing is true while the pool is changing: pods being
	// created, drained, deleted or rolled to a new template.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is true when the pool cannot do what its spec asks:
	// fewer ready runners than wanted, or tables with no runner to take them.
	ConditionDegraded = "Degraded"
)

// RunnerTemplate is what the runner pods are made from: the parts of a pod
// spec an operator of Pulka chooses. The operator adds the rest (the
// runner's id, the pool label, the Redis settings come through Env).
type RunnerTemplate struct {
	// Image of the table-runner container.
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`
	// ImagePullPolicy of the table-runner container.
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// Resources of the table-runner container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// Env of the table-runner container (PULKA_REDIS_ADDR and the like).
	// The operator sets PULKA_RUNNER_ID, PULKA_RUNNER_CAPACITY,
	// PULKA_RUNNER_HEARTBEAT_TTL, PULKA_RUNNER_ASSIGNER and PULKA_ADMIN_ADDR
	// itself; entries of those names here are dropped.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// NodeSelector of the runner pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations of the runner pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Affinity of the runner pods.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// Labels of the runner pods. The operator adds its own pulka.dev/pool
	// and pulka.dev/template-hash (which win over entries of those names),
	// and app.kubernetes.io/name: table-runner when none is given here.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// ServiceAccountName of the runner pods.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// TopologySpreadConstraints of the runner pods (e.g. across zones, so
	// that one zone's loss moves only its share of the tables).
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	// TerminationGracePeriodSeconds of the runner pods: how long the kubelet
	// waits after SIGTERM before it kills the runner. It must exceed the
	// runner's own shutdown bound (PULKA_SHUTDOWN_TIMEOUT, PULKA_DRAIN_DELAY),
	// or a runner is killed while it hands its tables over. Unset:
	// Kubernetes' default, 30 s.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
	// SecretMounts are Secrets mounted read-only into the table-runner
	// container (e.g. the CA that Redis' certificate is checked against).
	// Only Secrets: a runner needs no other volume, and the CRD stays small.
	// +optional
	// +listType=map
	// +listMapKey=name
	SecretMounts []SecretMount `json:"secretMounts,omitempty"`
}

// SecretMount is a Secret mounted read-only into the table-runner container.
type SecretMount struct {
	// Name of the pod's volume.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// SecretName is the Secret's name, in the pool's namespace.
	// +kubebuilder:validation:MinLength=1
	SecretName string `json:"secretName"`
	// MountPath is where its keys appear as files.
	// +kubebuilder:validation:Pattern=`^/`
	MountPath string `json:"mountPath"`
}

// RunnerPoolSpec is the pool an operator of Pulka asks for.
// +kubebuilder:validation:XValidation:rule="self.minRunners <= self.maxRunners",message="minRunners must not exceed maxRunners"
type RunnerPoolSpec struct {
	// Template of the runner pods.
	Template RunnerTemplate `json:"template"`
	// MinRunners is the fewest runners the pool keeps, however few tables.
	// Required, as 0 is a choice (a pool that starts a runner only when a
	// table is waiting) that a default would hide.
	// +kubebuilder:validation:Minimum=0
	MinRunners int32 `json:"minRunners"`
	// MaxRunners is the most runners the pool creates, however many tables.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=10
	// +optional
	MaxRunners int32 `json:"maxRunners,omitempty"`
	// Replicas, when set, fixes the number of runners (within min and max)
	// instead of sizing the pool from its tables; it is what the scale
	// subresource (kubectl scale, an autoscaler) sets. The API server serves
	// the scale subresource only while it is set: to hand a pool sized from
	// its tables to kubectl scale, set it first (kubectl patch).
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// TablesPerRunner is the most tables one runner owns (its capacity).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=50
	// +optional
	TablesPerRunner int32 `json:"tablesPerRunner,omitempty"`
	// TargetUtilizationPercent is how full, in percent of capacity, the
	// pool aims to run: desired runners = ceil(tables / (tablesPerRunner ×
	// target)), so there is room for new tables and for the tables of a
	// runner that dies.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=70
	// +optional
	TargetUtilizationPercent int32 `json:"targetUtilizationPercent,omitempty"`
	// DrainTimeout is how long a runner chosen for removal is given to hand
	// its tables over before its pod is deleted anyway.
	// +kubebuilder:default="60s"
	// +optional
	DrainTimeout metav1.Duration `json:"drainTimeout,omitzero"`
	// HeartbeatTTL is the runners' Redis heartbeat TTL: a runner that has
	// not beaten for this long is not live, even when its pod is Ready.
	// +kubebuilder:default="3s"
	// +optional
	HeartbeatTTL metav1.Duration `json:"heartbeatTTL,omitzero"`
	// NotReadyGrace is how long a pod may be NotReady before its tables
	// move (a short blip of the readiness probe does not migrate tables).
	// +kubebuilder:default="5s"
	// +optional
	NotReadyGrace metav1.Duration `json:"notReadyGrace,omitzero"`
}

// Migrations counts the tables the operator moved.
type Migrations struct {
	// Count is the number of tables moved since the pool was created.
	// +optional
	Count int64 `json:"count"`
	// LastReason is why the last table moved (PodDeleted, PodFailed,
	// NodeLost, NotReady, HeartbeatExpired, Draining, PodGone).
	// +optional
	LastReason string `json:"lastReason,omitempty"`
	// LastTime is when the last table moved.
	// +optional
	LastTime *metav1.Time `json:"lastTime,omitempty"`
}

// RunnerPoolStatus is what the operator observed.
type RunnerPoolStatus struct {
	// ObservedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Replicas is the number of runner pods, draining ones included.
	// +optional
	Replicas int32 `json:"replicas"`
	// DesiredRunners is the number of runners the pool is sized to.
	// +optional
	DesiredRunners int32 `json:"desiredRunners"`
	// ReadyRunners is the number of runners that are Ready and not draining.
	// +optional
	ReadyRunners int32 `json:"readyRunners"`
	// DrainingRunners is the number of runners being drained.
	// +optional
	DrainingRunners int32 `json:"drainingRunners"`
	// UpdatedRunners is the number of runners on the current template.
	// +optional
	UpdatedRunners int32 `json:"updatedRunners"`
	// Tables is the number of tables assigned to the pool's runners.
	// +optional
	Tables int32 `json:"tables"`
	// Capacity is ReadyRunners × TablesPerRunner.
	// +optional
	Capacity int32 `json:"capacity"`
	// Selector is the label selector of the runner pods, for the scale
	// subresource.
	// +optional
	Selector string `json:"selector,omitempty"`
	// Migrations counts the tables moved.
	// +optional
	Migrations Migrations `json:"migrations"`
	// Conditions: Available, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RunnerPool is a set of table-runner pods the operator creates, sizes by
// their tables, drains before deleting and assigns tables to.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=rp
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.status.desiredRunners`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyRunners`
// +kubebuilder:printcolumn:name="Draining",type=integer,JSONPath=`.status.drainingRunners`
// +kubebuilder:printcolumn:name="Tables",type=integer,JSONPath=`.status.tables`
// +kubebuilder:printcolumn:name="Capacity",type=integer,JSONPath=`.status.capacity`
// +kubebuilder:printcolumn:name="Migrations",type=integer,JSONPath=`.status.migrations.count`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RunnerPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RunnerPoolSpec   `json:"spec,omitempty"`
	Status RunnerPoolStatus `json:"status,omitempty"`
}

// RunnerPoolList is a list of RunnerPools.
//
// +kubebuilder:object:root=true
type RunnerPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RunnerPool `json:"items"`
}
