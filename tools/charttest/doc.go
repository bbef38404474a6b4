// Package charttest holds the tests of hcpsched's deployment artefacts: the Helm chart
// in deploy/charts/hcpsched, the Dockerfiles in deploy/docker and the static build
// they rely on. It lives in the tools module so that Helm's library and its
// dependencies stay out of the product module's graph; it has no code of its own.
package charttest
