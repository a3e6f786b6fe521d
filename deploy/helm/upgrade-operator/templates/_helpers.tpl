{{/* Full name: the release name, with the chart name added when absent. */}}
{{- define "upgrade-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "upgrade-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "upgrade-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "upgrade-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end -}}

{{- define "upgrade-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "upgrade-operator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "upgrade-operator.webhookService" -}}
{{ include "upgrade-operator.fullname" . }}-webhook
{{- end -}}

{{- define "upgrade-operator.webhookSecret" -}}
{{ include "upgrade-operator.fullname" . }}-webhook-tls
{{- end -}}

{{/*
The manager's rules come from files/rbac/role.yaml, which `make manifests`
generates from the +kubebuilder:rbac markers. They are split three ways:
  leaseRules    coordination.k8s.io: leader election, in the release namespace;
  platformRules upgrade.starlingx.io: the cluster-scoped Upgrade API;
  appRules      everything else: ApplicationUpgrades, Deployments,
                ReplicaSets, pods and events in the watched namespaces.
Each prints a YAML list.
*/}}
{{- define "upgrade-operator.generatedRules" -}}
{{- $role := .Files.Get "files/rbac/role.yaml" | fromYaml -}}
{{- if not $role.rules -}}
{{- fail "files/rbac/role.yaml has no rules: run make manifests" -}}
{{- end -}}
{{- toYaml $role.rules -}}
{{- end -}}

{{- define "upgrade-operator.leaseRules" -}}
{{- $out := list -}}
{{- range (include "upgrade-operator.generatedRules" . | fromYamlArray) -}}
{{- if has "coordination.k8s.io" .apiGroups -}}{{- $out = append $out . -}}{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{- define "upgrade-operator.platformRules" -}}
{{- $out := list -}}
{{- range (include "upgrade-operator.generatedRules" . | fromYamlArray) -}}
{{- if has "upgrade.starlingx.io" .apiGroups -}}{{- $out = append $out . -}}{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{- define "upgrade-operator.appRules" -}}
{{- $out := list -}}
{{- range (include "upgrade-operator.generatedRules" . | fromYamlArray) -}}
{{- if not (or (has "coordination.k8s.io" .apiGroups) (has "upgrade.starlingx.io" .apiGroups) (has "authorization.k8s.io" .apiGroups)) -}}{{- $out = append $out . -}}{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{- /* authRules: authorization.k8s.io (create subjectaccessreviews, cluster-scoped): the admission webhook asks whether the requester may get and patch each referenced Deployment. */}}
{{- define "upgrade-operator.authRules" -}}
{{- $out := list -}}
{{- range (include "upgrade-operator.generatedRules" . | fromYamlArray) -}}
{{- if has "authorization.k8s.io" .apiGroups -}}{{- $out = append $out . -}}{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
"true" when the webhook certificate comes from cert-manager: certManager.enabled
true, or auto and the cluster serves cert-manager.io/v1 (`helm template`
without --api-versions: in-process rotation). Empty otherwise.
*/}}
{{- define "upgrade-operator.useCertManager" -}}
{{- $v := .Values.webhook.certManager.enabled -}}
{{- if or (eq (toString $v) "true") (and (eq (toString $v) "auto") (.Capabilities.APIVersions.Has "cert-manager.io/v1")) -}}
true
{{- end -}}
{{- end -}}

{{/* The webhook Service's DNS names, in-cluster short form first; with webhook.url, its host. */}}
{{- define "upgrade-operator.webhookDNSName" -}}
{{- if .Values.webhook.url -}}
{{- $u := urlParse .Values.webhook.url -}}
{{- if or (ne $u.scheme "https") (not $u.hostname) (ne $u.path "") -}}
{{- fail (printf "webhook.url %q: want https://<host>[:<port>] with no path (the API server adds /convert and /validate-...)" .Values.webhook.url) -}}
{{- end -}}
{{- if regexMatch "^[0-9.]+$|:" $u.hostname -}}
{{- fail (printf "webhook.url %q: the host must be a DNS name such as localhost: the serving certificate holds DNS names only" .Values.webhook.url) -}}
{{- end -}}
{{ $u.hostname }}
{{- else -}}
{{ include "upgrade-operator.webhookService" . }}.{{ .Release.Namespace }}.svc
{{- end -}}
{{- end -}}

{{/* A webhook's clientConfig: the webhook Service (port when given), or webhook.url; path is the webhook's path. */}}
{{- define "upgrade-operator.webhookClientConfig" -}}
{{- if .root.Values.webhook.url -}}
{{- toJson (dict "url" (printf "%s%s" .root.Values.webhook.url .path)) -}}
{{- else -}}
{{- $svc := dict "name" (include "upgrade-operator.webhookService" .root) "namespace" .root.Release.Namespace "path" .path -}}
{{- with .port }}{{ $_ := set $svc "port" . }}{{ end -}}
{{- toJson (dict "service" $svc) -}}
{{- end -}}
{{- end -}}

{{- define "upgrade-operator.validatingWebhook" -}}
{{ include "upgrade-operator.fullname" . }}-validating
{{- end -}}
