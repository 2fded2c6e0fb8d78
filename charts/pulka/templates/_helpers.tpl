{{/* The prefix of every object's name. */}}
{{- define "pulka.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "pulka.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels selecting one component's pods: dict "root" $ "component" name. */}}
{{- define "pulka.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pulka.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/*
The labels of the pods: no chart version, so a chart upgrade that changes
nothing of a pod does not roll it (a gateway's roll closes its WebSockets, a
runner's moves its tables).
*/}}
{{- define "pulka.podLabels" -}}
{{ include "pulka.selectorLabels" . }}
app.kubernetes.io/part-of: pulka
{{- end -}}

{{/* Every object's labels: dict "root" $ "component" name. */}}
{{- define "pulka.labels" -}}
{{ include "pulka.selectorLabels" . }}
app.kubernetes.io/part-of: pulka
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The image of a service: dict "root" $ "service" name. */}}
{{- define "pulka.image" -}}
{{- printf "%s/%s:%s" .root.Values.image.registry .service (default .root.Chart.AppVersion .root.Values.image.tag) -}}
{{- end -}}

{{- define "pulka.sessionSecretName" -}}
{{- default (printf "%s-session" (include "pulka.fullname" .)) .Values.sessionSecret.existingSecret -}}
{{- end -}}

{{/* Whether the services log in to Redis. */}}
{{- define "pulka.redisAuth" -}}
{{- if or .Values.redis.auth.enabled .Values.redis.inChart.enabled -}}true{{- end -}}
{{- end -}}

{{- define "pulka.redisSecretName" -}}
{{- if .Values.redis.auth.existingSecret -}}
{{- .Values.redis.auth.existingSecret -}}
{{- else if .Values.redis.inChart.enabled -}}
{{- printf "%s-redis" (include "pulka.fullname" .) -}}
{{- else -}}
{{- fail "redis.auth.enabled needs redis.auth.existingSecret: a Secret with the Redis credentials (the chart generates a password only for its own Redis, redis.inChart.enabled)" -}}
{{- end -}}
{{- end -}}

{{- define "pulka.redisAddr" -}}
{{- if .Values.redis.inChart.enabled -}}
{{- printf "%s-redis:6379" (include "pulka.fullname" .) -}}
{{- else if .Values.redis.addr -}}
{{- .Values.redis.addr -}}
{{- else -}}
{{- fail "set redis.addr (host:port, or the Sentinels or cluster nodes comma-separated), or redis.inChart.enabled=true to try Pulka with a Redis in the chart" -}}
{{- end -}}
{{- end -}}

{{/* Checks of combinations the schema cannot express. */}}
{{- define "pulka.validate" -}}
{{- if and (eq .Values.redis.mode "sentinel") (not .Values.redis.sentinelMaster) -}}
{{- fail "redis.mode sentinel needs redis.sentinelMaster (the master's name)" -}}
{{- end -}}
{{- if and .Values.redis.inChart.enabled (ne .Values.redis.mode "standalone") -}}
{{- fail "redis.inChart is one standalone Redis: set redis.mode standalone, or run your Sentinel or Cluster outside the chart and give redis.addr" -}}
{{- end -}}
{{- if and .Values.lobby.coinTables (not .Values.wallet.enabled) -}}
{{- fail "lobby.coinTables needs wallet.enabled (the wallet holds the stakes)" -}}
{{- end -}}
{{- /* Behind an L7 ingress every connection comes from the controller's pods: without them trusted, all players share one address in the per-address limits (64 sockets, 128 connections, 30 guest sign-ups an hour for the whole site) and session cookies are not marked Secure behind TLS. */ -}}
{{- if and .Values.gateway.ingress.enabled (not .Values.gateway.trustedProxies) -}}
{{- fail "gateway.ingress needs gateway.trustedProxies (your ingress controller's pod CIDR): otherwise every player shares its address in the per-address limits (64 sockets for the whole site) and cookies are not marked Secure" -}}
{{- end -}}
{{- end -}}

{{/* The environment every Pulka process reads: Redis, admin server, logs, traces, shutdown. */}}
{{- define "pulka.commonEnv" -}}
- name: PULKA_REDIS_ADDR
  value: {{ include "pulka.redisAddr" . | quote }}
{{- if eq .Values.redis.mode "cluster" }}
- name: PULKA_REDIS_CLUSTER
  value: "true"
{{- else }}
- name: PULKA_REDIS_DB
  value: {{ .Values.redis.db | quote }}
{{- end }}
{{- if eq .Values.redis.mode "sentinel" }}
- name: PULKA_REDIS_SENTINEL_MASTER
  value: {{ .Values.redis.sentinelMaster | quote }}
{{- end }}
{{- if include "pulka.redisAuth" . }}
{{- $secret := include "pulka.redisSecretName" . }}
- name: PULKA_REDIS_USERNAME
  valueFrom:
    secretKeyRef: {name: {{ $secret }}, key: {{ .Values.redis.auth.usernameKey }}, optional: true}
- name: PULKA_REDIS_PASSWORD
  valueFrom:
    secretKeyRef: {name: {{ $secret }}, key: {{ .Values.redis.auth.passwordKey }}}
{{- if eq .Values.redis.mode "sentinel" }}
- name: PULKA_REDIS_SENTINEL_USERNAME
  valueFrom:
    secretKeyRef: {name: {{ $secret }}, key: {{ .Values.redis.auth.sentinelUsernameKey }}, optional: true}
- name: PULKA_REDIS_SENTINEL_PASSWORD
  valueFrom:
    secretKeyRef: {name: {{ $secret }}, key: {{ .Values.redis.auth.sentinelPasswordKey }}, optional: true}
{{- end }}
{{- end }}
{{- if .Values.redis.tls.enabled }}
- name: PULKA_REDIS_TLS
  value: "true"
{{- with .Values.redis.tls.serverName }}
- name: PULKA_REDIS_TLS_SERVER_NAME
  value: {{ . | quote }}
{{- end }}
{{- if .Values.redis.tls.caSecret }}
- name: PULKA_REDIS_TLS_CA_FILE
  value: /etc/pulka/redis-ca/{{ .Values.redis.tls.caKey }}
{{- end }}
{{- end }}
- name: PULKA_ADMIN_ADDR
  value: ":9090"
- name: PULKA_PPROF
  value: "false"
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: PULKA_SHUTDOWN_TIMEOUT
  value: "{{ .Values.shutdownTimeoutSeconds }}s"
- name: PULKA_DRAIN_DELAY
  value: "{{ .Values.drainDelaySeconds }}s"
- name: PULKA_MEMORY_LIMIT
  valueFrom:
    resourceFieldRef: {resource: limits.memory}
{{- with .Values.goGC }}
- name: GOGC
  value: {{ . | quote }}
{{- end }}
{{- with .Values.tracing.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- with .Values.tracing.sampler }}
- name: OTEL_TRACES_SAMPLER
  value: {{ . | quote }}
{{- end }}
{{- with .Values.tracing.samplerArg }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* A map name → value as env entries, sorted by name. */}}
{{- define "pulka.mapEnv" -}}
{{- range $k, $v := . }}
- name: {{ $k }}
  value: {{ $v | toString | quote }}
{{- end }}
{{- end -}}

{{/* The kubelet's grace: the service's own shutdown bound, its drain delay and 5 s for the process to exit. */}}
{{- define "pulka.terminationGrace" -}}
{{- add .Values.shutdownTimeoutSeconds .Values.drainDelaySeconds 5 -}}
{{- end -}}

{{/* Probes on the admin port: /readyz takes a pod out of its Service while it drains or lost Redis; /healthz restarts a stuck process. */}}
{{- define "pulka.probes" -}}
startupProbe:
  httpGet: {path: /healthz, port: admin}
  periodSeconds: 2
  failureThreshold: 30
livenessProbe:
  httpGet: {path: /healthz, port: admin}
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
readinessProbe:
  httpGet: {path: /readyz, port: admin}
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 2
{{- end -}}

{{/* Topology spread constraints with the component's labels as the default selector: dict "root" $ "component" name "tsc" list. */}}
{{- define "pulka.topologySpread" -}}
{{- $root := .root -}}
{{- $component := .component -}}
{{- range .tsc }}
{{- $c := deepCopy . }}
{{- if not (hasKey $c "labelSelector") }}
{{- $_ := set $c "labelSelector" (dict "matchLabels" (include "pulka.selectorLabels" (dict "root" $root "component" $component) | fromYaml)) }}
{{- end }}
- {{ toYaml $c | nindent 2 | trim }}
{{- end }}
{{- end -}}

{{- define "pulka.imagePullSecrets" -}}
{{- $names := list -}}
{{- range $name, $on := .Values.imagePullSecrets }}{{ if $on }}{{ $names = append $names $name }}{{ end }}{{ end -}}
{{- if $names }}
imagePullSecrets:
{{- range $names }}
  - name: {{ . }}
{{- end }}
{{- end }}
{{- end -}}
