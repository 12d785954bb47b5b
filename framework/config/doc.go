// Package config reads clusterloader2-format test configs: it renders the
// Go templates of the config, its modules and its object templates, maps
// overrides, Nodes and CL2_* environment variables into the template
// mapping, and validates the result before anything touches a cluster.
// Every error names the file, line and column and the field path.
//
// # Compile
//
// Compile renders the config with the mapping (BuildMapping), parses it,
// replaces each `module: {path, params}` step by the steps of the module
// file (rendered with its params over the mapping of the file that names
// it, recursively, cycles refused), decodes the result with keys matched
// ignoring case (as clusterloader2's JSON decoding does, so Method,
// Identifier, Params, Instances work), fills in defaults and validates.
// Every problem found is returned at once in an ErrorList.
//
// # Paths
//
// As in clusterloader2, module, objectTemplatePath, IncludeFile and
// IncludeEmbedFile paths are relative to the folder of the top config,
// whichever file names them (a leading "/" changes nothing). A module or
// include path that names no file there but one beside the file that
// names it is taken from there. IncludeFile also expands $VARIABLES and
// reads an absolute path as it is.
//
// # Functions
//
// The template functions take their arguments as clusterloader2's do: the
// Int arithmetic (AddInt, MultiplyInt, DivideInt, MaxInt, …) computes on
// floats and truncates the result toward zero, so MultiplyInt 10 0.5 is 5;
// RandInt and RandIntRange include both ends; Seq N is N zeros (the old
// name of SliceOfZeros); IncludeEmbedFile returns the file unrendered.
//
// # Missing keys
//
// A key nobody set renders as clusterloader2 renders it (false in an if,
// "<no value>" when printed), and each use is a warning naming the key and
// where it is (Compiled.Warnings); with Options.StrictTemplates it is an
// error. The first argument of DefaultParam (.X, .A.B, $.X) yields nil
// when missing, without a warning, so that {{$X := DefaultParam .CL2_X 5}}
// keeps working. Object templates of
// deleting phases render leniently (ObjectVars.Lenient), as clusterloader2
// configs omit the templateFillMap there.
//
// # Error positions
//
// Errors read "file:line:col: field.path: message", columns counted from 1.
// Template errors (parse and execution) carry the template's own position.
// Errors about the decoded config carry the position in the rendered text
// of the file the value was written in (the config or a module). When the
// rendered text keeps the template's lines — the same number of lines and
// every line without an action unchanged, which holds for the usual config
// whose parameter lines render empty and whose values are substituted
// within a line — the file is named plainly and the line is the
// template's. Otherwise (a range, an if around several lines, a multi-line
// action) it is named "<file> (rendered)" and Compiled.Rendered holds that
// text; a module rendered twice with different results is named
// "<file> (rendered for steps[N].module)". Field paths follow the files as
// written: a step from a module is steps[2].module.steps[0].
package config
