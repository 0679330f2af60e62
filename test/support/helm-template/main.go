// helm-template renders a Helm chart as `helm template` does, for the chart tests of a machine without
// helm: Go's text/template with the sprig functions (Helm's own engine and function library) plus
// Helm's functions include, tpl, required, fail, toYaml, fromYaml and lookup. Usage:
//   helm-template CHART_DIR RELEASE_NAME NAMESPACE [VALUES_FILE ...]
// Later values files merge over values.yaml. Rendered documents go to stdout, each under
// "# Source: <chart>/templates/<file>"; NOTES.txt and files starting with "_" are not rendered.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: helm-template CHART_DIR RELEASE_NAME NAMESPACE [VALUES_FILE ...]")
		os.Exit(2)
	}
	out, err := render(os.Args[1], os.Args[2], os.Args[3], os.Args[4:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
	fmt.Print(out)
}

func readYAML(path string) (map[string]interface{}, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	result := map[string]interface{}{}
	if err := yaml.Unmarshal(data, &result); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return result, nil
}

// merge copies src over dst, recursing into maps (Helm's coalescing of values files).
func merge(dst, src map[string]interface{}) map[string]interface{} {
	for key, value := range src {
		if srcMap, ok := value.(map[string]interface{}); ok {
			if dstMap, ok := dst[key].(map[string]interface{}); ok {
				dst[key] = merge(dstMap, srcMap)
				continue
			}
		}
		if value == nil {
			delete(dst, key)
			continue
		}
		dst[key] = value
	}
	return dst
}

func render(chartDir, release, namespace string, valueFiles []string) (string, error) {
	chart, err := readYAML(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		return "", err
	}
	values, err := readYAML(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		return "", err
	}
	for _, file := range valueFiles {
		override, err := readYAML(file)
		if err != nil {
			return "", err
		}
		values = merge(values, override)
	}
	chartName := fmt.Sprint(chart["name"])
	top := map[string]interface{}{
		"Values": values,
		"Chart": map[string]interface{}{
			"Name": chart["name"], "Version": chart["version"], "AppVersion": chart["appVersion"],
			"Description": chart["description"], "Type": chart["type"],
		},
		"Release": map[string]interface{}{
			"Name": release, "Namespace": namespace, "Service": "Helm", "IsInstall": true,
			"IsUpgrade": false, "Revision": 1,
		},
		"Capabilities": map[string]interface{}{
			"KubeVersion": map[string]interface{}{"Version": "v1.30.0", "Major": "1", "Minor": "30"},
		},
	}

	root := template.New("chart").Option("missingkey=zero")
	var includeDepth int
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	funcs["include"] = func(name string, data interface{}) (string, error) {
		includeDepth++
		defer func() { includeDepth-- }()
		if includeDepth > 1000 {
			return "", fmt.Errorf("include %q: recursion too deep", name)
		}
		var buffer bytes.Buffer
		err := root.ExecuteTemplate(&buffer, name, data)
		return buffer.String(), err
	}
	funcs["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", err
		}
		t, err = t.New("tpl").Parse(text)
		if err != nil {
			return "", err
		}
		var buffer bytes.Buffer
		err = t.Execute(&buffer, data)
		return buffer.String(), err
	}
	funcs["required"] = func(message string, value interface{}) (interface{}, error) {
		if value == nil || value == "" {
			return nil, fmt.Errorf("%s", message)
		}
		return value, nil
	}
	funcs["fail"] = func(message string) (string, error) { return "", fmt.Errorf("%s", message) }
	funcs["toYaml"] = func(value interface{}) string {
		data, err := yaml.Marshal(value)
		if err != nil {
			return ""
		}
		return strings.TrimSuffix(string(data), "\n")
	}
	funcs["fromYaml"] = func(text string) map[string]interface{} {
		result := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(text), &result); err != nil {
			result["Error"] = err.Error()
		}
		return result
	}
	funcs["lookup"] = func(string, string, string, string) map[string]interface{} { return map[string]interface{}{} }
	root.Funcs(funcs)

	templatesDir := filepath.Join(chartDir, "templates")
	entries, err := os.ReadDir(templatesDir)
	if err != nil {
		return "", err
	}
	var names []string
	for _, entry := range entries {
		if entry.IsDir() {
			continue
		}
		name := chartName + "/templates/" + entry.Name()
		data, err := os.ReadFile(filepath.Join(templatesDir, entry.Name()))
		if err != nil {
			return "", err
		}
		if _, err := root.New(name).Parse(string(data)); err != nil {
			return "", err
		}
		if !strings.HasPrefix(entry.Name(), "_") && entry.Name() != "NOTES.txt" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out strings.Builder
	for _, name := range names {
		scope := map[string]interface{}{}
		for key, value := range top {
			scope[key] = value
		}
		scope["Template"] = map[string]interface{}{"Name": name, "BasePath": chartName + "/templates"}
		var buffer bytes.Buffer
		if err := root.ExecuteTemplate(&buffer, name, scope); err != nil {
			return "", err
		}
		text := strings.ReplaceAll(buffer.String(), "<no value>", "")
		for _, document := range strings.Split(text, "\n---") {
			if strings.TrimSpace(document) == "" {
				continue
			}
			fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", name, strings.TrimLeft(strings.TrimPrefix(document, "---"), "\n"))
		}
	}
	return out.String(), nil
}
