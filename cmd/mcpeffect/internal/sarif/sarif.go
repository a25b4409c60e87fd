// Package sarif writes the Static Analysis Results Interchange Format,
// version 2.1.0 (OASIS), as far as the commands of mcpeffect need it: one
// run of one tool, its rules, and results that each name a rule, a level,
// a message and a location. It is the subset that GitHub code scanning
// and other SARIF readers require: a result without a physical location,
// or whose rule has no id, is not shown by them.
package sarif

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"strings"
)

// The version of SARIF written, and the URI of its JSON schema.
const (
	Version = "2.1.0"
	Schema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)

// The levels of a result or a rule.
const (
	LevelError   = "error"
	LevelWarning = "warning"
	LevelNote    = "note"
)

// A Log is a SARIF file: its runs.
type Log struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []Run  `json:"runs"`
}

// A Run is one run of one tool.
type Run struct {
	Tool    Tool     `json:"tool"`
	Results []Result `json:"results"`
	// AutomationDetails names the analysis, so that readers that keep
	// alerts across runs (GitHub code scanning) tell two analyses of one
	// repository apart.
	AutomationDetails *AutomationDetails `json:"automationDetails,omitempty"`
}

// AutomationDetails identify the analysis of a run.
type AutomationDetails struct {
	ID string `json:"id"`
}

// A Tool is the tool that made a run.
type Tool struct {
	Driver Driver `json:"driver"`
}

// A Driver is the tool's main component: its name, version and rules.
type Driver struct {
	Name           string `json:"name"`
	Version        string `json:"version,omitempty"`
	InformationURI string `json:"informationUri,omitempty"`
	Rules          []Rule `json:"rules"`
}

// A Rule is what a result breaks (a reportingDescriptor).
type Rule struct {
	ID                   string        `json:"id"`
	Name                 string        `json:"name,omitempty"`
	ShortDescription     Message       `json:"shortDescription"`
	FullDescription      *Message      `json:"fullDescription,omitempty"`
	Help                 *Help         `json:"help,omitempty"`
	DefaultConfiguration Configuration `json:"defaultConfiguration"`
}

// Configuration is a rule's default configuration: its level.
type Configuration struct {
	Level string `json:"level"`
}

// Help is a rule's help, in plain text and in Markdown.
type Help struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

// A Message is text for people.
type Message struct {
	Text string `json:"text"`
}

// A Result is one finding.
type Result struct {
	RuleID    string     `json:"ruleId"`
	RuleIndex int        `json:"ruleIndex"`
	Level     string     `json:"level"`
	Message   Message    `json:"message"`
	Locations []Location `json:"locations"`
	// PartialFingerprints identify the result across runs, where the
	// location alone (one file, line 1) cannot.
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
}

// A Location is where a result is: a file, and the logical thing in it
// (a tool of a server).
type Location struct {
	PhysicalLocation PhysicalLocation  `json:"physicalLocation"`
	LogicalLocations []LogicalLocation `json:"logicalLocations,omitempty"`
}

// A PhysicalLocation is a region of a file.
type PhysicalLocation struct {
	ArtifactLocation ArtifactLocation `json:"artifactLocation"`
	Region           *Region          `json:"region,omitempty"`
}

// An ArtifactLocation is a file: a URI, relative to the root of the
// sources when URIBaseID is "%SRCROOT%".
type ArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

// A Region is a part of a file.
type Region struct {
	StartLine int `json:"startLine"`
}

// A LogicalLocation is a thing a result is about, other than a file.
type LogicalLocation struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
	Kind               string `json:"kind,omitempty"`
}

// New returns a log of one run of the driver, with no results yet.
func New(d Driver) *Log {
	if d.Rules == nil {
		d.Rules = []Rule{}
	}
	return &Log{Schema: Schema, Version: Version, Runs: []Run{{Tool: Tool{Driver: d}, Results: []Result{}}}}
}

// Add adds a result of the rule id to the log's run, at loc. The rule must
// be one of the driver's: Add panics otherwise, as a result that names no
// rule of its run is not SARIF.
func (l *Log) Add(id, level, message string, loc Location, fingerprint ...string) {
	run := &l.Runs[0]
	index := -1
	for i, r := range run.Tool.Driver.Rules {
		if r.ID == id {
			index = i
			break
		}
	}
	if index < 0 {
		panic("sarif: result of unknown rule " + id)
	}
	res := Result{RuleID: id, RuleIndex: index, Level: level, Message: Message{message}, Locations: []Location{loc}}
	if len(fingerprint) > 0 {
		sum := sha256.Sum256([]byte(strings.Join(append([]string{id}, fingerprint...), "\x00")))
		res.PartialFingerprints = map[string]string{"mcpeffect/v1": hex.EncodeToString(sum[:16])}
	}
	run.Results = append(run.Results, res)
}

// FileLocation returns the location of a thing named name (of kind, a
// SARIF logical location kind such as "function") in the file at uri: a
// path relative to the root of the sources, or an absolute URI; at its
// first line.
func FileLocation(uri, name, fullName, kind string) Location {
	return LineLocation(uri, 1, name, fullName, kind)
}

// LineLocation is [FileLocation] at line of the file, the first if line
// is less than 1.
func LineLocation(uri string, line int, name, fullName, kind string) Location {
	a := ArtifactLocation{URI: uri}
	if !strings.Contains(uri, "://") {
		// A path: a URI reference, escaped (a space is %20), relative
		// to the root of the sources unless it is absolute.
		a.URI = (&url.URL{Path: filepath.ToSlash(uri)}).EscapedPath()
		if !strings.HasPrefix(a.URI, "/") {
			a.URIBaseID = "%SRCROOT%"
		}
	}
	loc := Location{PhysicalLocation: PhysicalLocation{ArtifactLocation: a, Region: &Region{StartLine: max(line, 1)}}}
	if name != "" {
		loc.LogicalLocations = []LogicalLocation{{Name: name, FullyQualifiedName: fullName, Kind: kind}}
	}
	return loc
}

// Write writes l as indented JSON.
func (l *Log) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(l)
}
