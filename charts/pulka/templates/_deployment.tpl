{{/*
A Pulka service's Deployment: dict
  "root" $, "component" name (also the image's service), "v" its values,
  "replicas" (omitted when an HPA owns it), "env" extra env entries (YAML),
  "httpPort" (the gateway's public port, or 0), "serviceAccount" (or "").
*/}}
{{- define "pulka.deployment" -}}
{{- $root := .root -}}
{{- $v := .v -}}
{{- $sel := dict "root" $root "component" .component -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "pulka.fullname" $root }}-{{ .component }}
  labels:
    {{- include "pulka.labels" $sel | nindent 4 }}
spec:
  {{- if not (kindIs "invalid" .replicas) }}
  replicas: {{ .replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "pulka.selectorLabels" $sel | nindent 6 }}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}
  template:
    metadata:
      labels:
        {{- include "pulka.podLabels" $sel | nindent 8 }}
        {{- with $v.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $v.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      {{- with .serviceAccount }}
      serviceAccountName: {{ . }}
      {{- else }}
      serviceAccountName: {{ include "pulka.fullname" $root }}-workload
      automountServiceAccountToken: false
      {{- end }}
      terminationGracePeriodSeconds: {{ include "pulka.terminationGrace" $root }}
      enableServiceLinks: false
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      {{- include "pulka.imagePullSecrets" $root | nindent 6 }}
      containers:
        - name: {{ .component }}
          image: {{ include "pulka.image" (dict "root" $root "service" .component) }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          ports:
            - {name: admin, containerPort: 9090, protocol: TCP}
            {{- if .httpPort }}
            - {name: http, containerPort: {{ .httpPort }}, protocol: TCP}
            {{- end }}
          env:
            {{- include "pulka.commonEnv" $root | nindent 12 }}
            {{- with .env }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- include "pulka.mapEnv" $v.extraEnv | nindent 12 }}
          {{- include "pulka.probes" $root | nindent 10 }}
          resources:
            {{- toYaml $v.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          {{- if $root.Values.redis.tls.caSecret }}
          volumeMounts:
            - {name: redis-ca, mountPath: /etc/pulka/redis-ca, readOnly: true}
          {{- end }}
      {{- if $root.Values.redis.tls.caSecret }}
      volumes:
        - name: redis-ca
          secret: {secretName: {{ $root.Values.redis.tls.caSecret }}}
      {{- end }}
      {{- with $v.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- include "pulka.topologySpread" (dict "root" $root "component" $sel.component "tsc" .) | nindent 8 }}
      {{- end }}
{{- end -}}

{{/* A component's PodDisruptionBudget: dict "root" $ "component" name "v" values. */}}
{{- define "pulka.pdb" -}}
{{- if .v.podDisruptionBudget.enabled }}
{{- $sel := dict "root" .root "component" .component }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "pulka.fullname" .root }}-{{ .component }}
  labels:
    {{- include "pulka.labels" $sel | nindent 4 }}
spec:
  maxUnavailable: {{ .v.podDisruptionBudget.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "pulka.selectorLabels" $sel | nindent 6 }}
{{- end }}
{{- end -}}

{{/* A component's Service with the admin port (and the gateway's HTTP port). */}}
{{- define "pulka.service" -}}
{{- $sel := dict "root" .root "component" .component }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ include "pulka.fullname" .root }}-{{ .component }}
  labels:
    {{- include "pulka.labels" $sel | nindent 4 }}
  {{- with .annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ default "ClusterIP" .type }}
  selector:
    {{- include "pulka.selectorLabels" $sel | nindent 4 }}
  ports:
    {{- if .port }}
    - {name: http, port: {{ .port }}, targetPort: http, protocol: TCP}
    {{- end }}
    - {name: admin, port: 9090, targetPort: admin, protocol: TCP}
{{- end -}}
