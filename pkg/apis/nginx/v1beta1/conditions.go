package v1beta1

// Condition types shared by the kinds of this API. Reasons are CamelCase and
// documented where they are set.
const (
	// ConditionAvailable: the nginx instance serves traffic with its desired replicas.
	ConditionAvailable = "Available"
	// ConditionProgressing: a rollout or scale operation is under way.
	ConditionProgressing = "Progressing"
	// ConditionDegraded: something the user must fix stops the object from being fully served.
	ConditionDegraded = "Degraded"
	// ConditionReconciled: the last reconciliation applied the spec without error.
	ConditionReconciled = "Reconciled"
	// ConditionAccepted: the spec was understood and can be acted upon.
	ConditionAccepted = "Accepted"
	// ConditionReady: the object's output exists and is current.
	ConditionReady = "Ready"
	// ConditionRestored: every replica's content was seeded from spec.restore.
	ConditionRestored = "Restored"
	// ConditionCertificatesReady: cert-manager issued every certificate the
	// servers ask for with tls.issuerRef; absent when none does.
	ConditionCertificatesReady = "CertificatesReady"
)
