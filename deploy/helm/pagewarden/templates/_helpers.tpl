{{- define "pagewarden.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* <release>-pagewarden, or the release name alone when it already contains the chart's name */}}
{{- define "pagewarden.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "pagewarden.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "pagewarden.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* selector labels of one component: platform, prefill, decode, postgresql */}}
{{- define "pagewarden.selector" -}}
app.kubernetes.io/name: {{ include "pagewarden.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "pagewarden.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "pagewarden.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "pagewarden.fullname" .) }}
{{- end }}

{{- define "pagewarden.dbSecretName" -}}
{{- .Values.postgresql.existingSecret | default (include "pagewarden.fullname" .) }}
{{- end }}

{{- define "pagewarden.dbPasswordKey" -}}
{{- if .Values.postgresql.existingSecret }}{{ .Values.postgresql.passwordKey }}{{ else }}db-password{{ end }}
{{- end }}

{{/* the PostgreSQL host the platform uses: the bundled server's Service or postgresql.host; empty: embedded */}}
{{- define "pagewarden.dbHost" -}}
{{- if .Values.postgresql.bundled.enabled }}{{ include "pagewarden.fullname" . }}-postgresql{{ else }}{{ .Values.postgresql.host }}{{ end }}
{{- end }}

{{/* a value from values.yaml, else a new random one (the Secret is made once, at install) */}}
{{- define "pagewarden.secretValue" -}}
{{- if .value }}{{ .value }}{{ else }}{{ randAlphaNum 40 }}{{ end }}
{{- end }}

{{/* securityContexts: the image's numeric user, nothing else */}}
{{- define "pagewarden.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile: {type: RuntimeDefault}
{{- end }}

{{- define "pagewarden.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities: {drop: [ALL]}
{{- end }}

{{/* one engine node role's StatefulSet and headless Service: dict root, role, spec (its values), secret */}}
{{- define "pagewarden.engineNode" -}}
{{- $root := .root }}
{{- $full := include "pagewarden.fullname" $root }}
{{- $name := printf "%s-%s" $full .role }}
apiVersion: v1
kind: Service
metadata:
  name: {{ $name }}
  labels:
    {{- include "pagewarden.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .role }}
spec:
  # headless: the platform's dns: entry resolves to every ready node of this role
  clusterIP: None
  selector:
    {{- include "pagewarden.selector" (dict "root" $root "component" .role) | nindent 4 }}
  ports:
    - {name: kv, port: {{ .spec.port }}, targetPort: kv}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ $name }}
  labels:
    {{- include "pagewarden.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .role }}
spec:
  serviceName: {{ $name }}
  replicas: {{ .spec.replicas }}
  # nodes hold no state: start and stop them all at once
  podManagementPolicy: Parallel
  selector:
    matchLabels:
      {{- include "pagewarden.selector" (dict "root" $root "component" .role) | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "pagewarden.selector" (dict "root" $root "component" .role) | nindent 8 }}
    spec:
      terminationGracePeriodSeconds: {{ $root.Values.engineNodes.terminationGracePeriodSeconds }}
      securityContext:
        {{- include "pagewarden.podSecurityContext" $root | nindent 8 }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: node
          image: {{ include "pagewarden.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          securityContext:
            {{- include "pagewarden.containerSecurityContext" $root | nindent 12 }}
          # the engine's `node` command from the platform jar (Spring Boot's PropertiesLauncher with
          # loader.main); its certificate name is the pod's name, in the role's Secret
          command: ["/opt/jre/bin/java", "-Dloader.main=dev.pagewarden.cli.Main", "-cp", "/opt/pagewarden/pagewarden-platform.jar",
                    "org.springframework.boot.loader.launch.PropertiesLauncher"]
          args:
            - node
            - --role
            - {{ .role }}
            - --listen
            - 0.0.0.0:{{ .spec.port }}
            # how the other nodes reach this one: the pod's address
            - --advertise
            - $(POD_IP)
            - --name
            - $(POD_NAME)
            - --tls
            - /etc/pagewarden/tls
            - --platform
            - {{ $root.Values.engineNodes.tls.platformName }}
            - --model
            - {{ $root.Values.model.path }}
            {{- with $root.Values.model.tokenizer }}
            - --tokenizer
            - {{ . }}
            {{- end }}
            - --backend
            - {{ if gt (int .spec.gpus) 0 }}gpu{{ else }}auto{{ end }}
            {{- range .spec.args }}
            - {{ . | quote }}
            {{- end }}
          env:
            - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
          ports:
            - {name: kv, containerPort: {{ .spec.port }}}
          # the node speaks only mutual TLS, so a TCP connect is all a probe can check (the node logs each
          # one as a failed handshake: hence the slow period). A node that stops answering is taken out of
          # rotation by the platform's heartbeats, so there is no liveness probe
          startupProbe:
            tcpSocket: {port: kv}
            periodSeconds: 5
            failureThreshold: 120
          readinessProbe:
            tcpSocket: {port: kv}
            periodSeconds: 60
          resources:
            {{- $res := deepCopy .spec.resources }}
            {{- if gt (int .spec.gpus) 0 }}
            {{- $gpu := dict "nvidia.com/gpu" (int .spec.gpus) }}
            {{- $_ := set $res "requests" (merge (default dict $res.requests) $gpu) }}
            {{- $_ := set $res "limits" (merge (default dict $res.limits) $gpu) }}
            {{- end }}
            {{- toYaml $res | nindent 12 }}
          volumeMounts:
            - {name: tls, mountPath: /etc/pagewarden/tls, readOnly: true}
            - {name: models, mountPath: /models, readOnly: true}
            - {name: tmp, mountPath: /tmp}
            # the user's home (the CUDA driver's kernel cache); a node keeps nothing across restarts
            - {name: home, mountPath: /var/lib/pagewarden}
      volumes:
        - name: tls
          secret:
            secretName: {{ .secret }}
            # group-readable for the image's group (fsGroup), never world-readable
            defaultMode: 0440
        - name: models
          persistentVolumeClaim: {claimName: {{ $root.Values.model.claimName }}, readOnly: true}
        - name: tmp
          emptyDir: {}
        - name: home
          emptyDir: {}
      {{- with .spec.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .spec.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}
