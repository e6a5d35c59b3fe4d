//! Diagnostics: one error type for every phase, accumulated in a context and
//! rendered rustc-style (file:line:col, the source line, a caret, a hint), or
//! turned into a `syn::Error` for the proc-macro front end.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proc_macro2::Span;

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Generation fails; nothing is written.
    Error,
    /// Reported, but generation goes on.
    Warning,
}

/// A source file the engine read, shared by every location that points into it.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The path as the user gave it (relative paths stay relative).
    pub path: PathBuf,
    /// The file's text.
    pub text: Arc<str>,
}

impl SourceFile {
    /// Wraps a path and its text.
    pub fn new(path: impl Into<PathBuf>, text: impl Into<Arc<str>>) -> Self {
        SourceFile { path: path.into(), text: text.into() }
    }

    /// The location of `span` (from a `syn` parse of this file's text).
    pub fn location(&self, span: Span) -> Location {
        let start = span.start();
        let end = span.end();
        let line_text = self.text.lines().nth(start.line.saturating_sub(1)).unwrap_or_default().to_string();
        Location {
            file: self.path.clone(),
            line: start.line.max(1),
            column: start.column,
            end_line: end.line.max(1),
            end_column: end.column,
            line_text,
        }
    }

    /// A location covering the first line of the file (for file-level problems).
    pub fn start(&self) -> Location {
        Location {
            file: self.path.clone(),
            line: 1,
            column: 0,
            end_line: 1,
            end_column: self.text.lines().next().map_or(0, |l| l.chars().count()),
            line_text: self.text.lines().next().unwrap_or_default().to_string(),
        }
    }
}

/// Where something came from in the user's sources (the model's provenance).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// File path.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 0-based column (in characters) on `line`.
    pub column: usize,
    /// 1-based line where the span ends.
    pub end_line: usize,
    /// 0-based column where the span ends.
    pub end_column: usize,
    /// The text of `line`, for rendering.
    pub line_text: String,
}

/// One problem found in the user's input, with an optional location and hint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong, one line, lower case, no trailing period.
    pub message: String,
    /// Where, if known (boxed: keeps `Result<_, Diagnostic>` small).
    pub location: Option<Box<Location>>,
    /// How to fix it.
    pub help: Option<String>,
    /// Extra context lines (`= note: ...`).
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// A new error.
    pub fn error(message: impl Into<String>) -> Self {
        Diagnostic { severity: Severity::Error, message: message.into(), location: None, help: None, notes: Vec::new() }
    }

    /// A new warning.
    pub fn warning(message: impl Into<String>) -> Self {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(message) }
    }

    /// Attaches a location.
    pub fn at(mut self, location: Location) -> Self {
        self.location = Some(Box::new(location));
        self
    }

    /// Attaches a location if there is one.
    pub fn at_opt(mut self, location: Option<&Location>) -> Self {
        self.location = location.cloned().map(Box::new);
        self
    }

    /// Attaches a hint.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Attaches a hint if there is one.
    pub fn help_opt(mut self, help: Option<String>) -> Self {
        self.help = help;
        self
    }

    /// Adds a note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// The message and hint as one string, as a proc-macro error shows it.
    pub fn compile_error_message(&self) -> String {
        match &self.help {
            Some(help) => format!("{}\n\n= help: {help}", self.message),
            None => self.message.clone(),
        }
    }

    /// Renders the diagnostic like rustc does.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let label = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        out.push_str(&format!("{label}: {}\n", self.message));
        let gutter_width;
        if let Some(loc) = &self.location {
            let line_no = loc.line.to_string();
            gutter_width = line_no.len();
            let pad = " ".repeat(gutter_width);
            out.push_str(&format!("{pad}--> {}:{}:{}\n", display_path(&loc.file), loc.line, loc.column + 1));
            out.push_str(&format!("{pad} |\n"));
            let text = loc.line_text.replace('\t', "    ");
            out.push_str(&format!("{line_no} | {}\n", text.trim_end()));
            let line_len = loc.line_text.chars().count();
            let start = loc.column.min(line_len);
            let end = if loc.end_line == loc.line { loc.end_column.min(line_len) } else { line_len };
            // Columns count characters; the caret goes by the terminal
            // columns they take (a tab is four, CJK and emoji two).
            let cells = |c: char| if c == '\t' { 4 } else { unicode_width::UnicodeWidthChar::width(c).unwrap_or(0) };
            let prefix = " ".repeat(loc.line_text.chars().take(start).map(cells).sum());
            let width =
                loc.line_text.chars().skip(start).take(end.saturating_sub(start)).map(cells).sum::<usize>().max(1);
            out.push_str(&format!("{pad} | {prefix}{}\n", "^".repeat(width)));
        } else {
            gutter_width = 0;
        }
        let pad = " ".repeat(gutter_width);
        for note in &self.notes {
            out.push_str(&format!("{pad} = note: {note}\n"));
        }
        if let Some(help) = &self.help {
            out.push_str(&format!("{pad} = help: {help}\n"));
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

fn display_path(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// The accumulator every phase reports into (serde_derive's `Ctxt`): collect
/// everything, then stop between phases if anything was an error.
#[derive(Debug, Default)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// An empty accumulator.
    pub fn new() -> Self {
        Diagnostics::default()
    }

    /// Records a diagnostic.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.items.push(diagnostic);
    }

    /// Records an error at `location` with an optional hint.
    pub fn error(&mut self, location: Option<&Location>, message: impl Into<String>, help: Option<String>) {
        self.push(Diagnostic::error(message).at_opt(location).help_opt(help));
    }

    /// Whether any error (not warning) was recorded.
    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }

    /// How many diagnostics were recorded: a mark for [`Self::rewind`].
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Forgets what was recorded after `mark` (a [`Self::len`]).
    pub fn rewind(&mut self, mark: usize) {
        self.items.truncate(mark);
    }

    /// Whether an error was recorded after `mark` (a [`Self::len`]).
    pub fn has_errors_since(&self, mark: usize) -> bool {
        self.items.iter().skip(mark).any(|d| d.severity == Severity::Error)
    }

    /// Everything recorded so far.
    pub fn items(&self) -> &[Diagnostic] {
        &self.items
    }

    /// Moves everything out.
    pub fn take(&mut self) -> Vec<Diagnostic> {
        std::mem::take(&mut self.items)
    }

    /// `Err(all)` if any error was recorded, `Ok(warnings)` otherwise: the
    /// check between two phases.
    pub fn check(&mut self) -> Result<(), Vec<Diagnostic>> {
        if self.has_errors() { Err(self.sorted()) } else { Ok(()) }
    }

    /// Everything recorded, in source order (file, line, column), errors of
    /// the same place before warnings; deterministic whatever the walk order.
    pub fn sorted(&mut self) -> Vec<Diagnostic> {
        let mut items = self.take();
        items.sort_by(|a, b| {
            let key = |d: &Diagnostic| d.location.as_ref().map(|l| (l.file.clone(), l.line, l.column));
            key(a).cmp(&key(b)).then(a.severity.cmp(&b.severity)).then(a.message.cmp(&b.message))
        });
        items.dedup();
        items
    }
}

/// Renders a list of diagnostics, one after the other, with a summary line.
pub fn render_all(diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diagnostics {
        out.push_str(&d.render());
        out.push('\n');
    }
    let errors = diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
    if errors > 0 {
        let plural = if errors == 1 { "" } else { "s" };
        out.push_str(&format!("error: could not generate code due to {errors} previous error{plural}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_rustc() {
        let src = SourceFile::new("pkg/apis/example/v1/types.rs", "use x;\n#[genclient(no_stauts)]\npub struct A;\n");
        let file: syn::File = syn::parse_str(&src.text).unwrap();
        let syn::Item::Struct(s) = &file.items[1] else { panic!() };
        let syn::Meta::List(list) = &s.attrs[0].meta else { panic!() };
        let tok = list.tokens.clone().into_iter().next().unwrap();
        let d = Diagnostic::error("unknown `genclient` argument `no_stauts`")
            .at(src.location(tok.span()))
            .help("did you mean `no_status`?");
        assert_eq!(
            d.render(),
            "error: unknown `genclient` argument `no_stauts`\n \
             --> pkg/apis/example/v1/types.rs:2:13\n  |\n\
             2 | #[genclient(no_stauts)]\n  |             ^^^^^^^^^\n  = help: did you mean `no_status`?\n"
        );
    }

    #[test]
    fn check_collects_and_sorts() {
        let mut d = Diagnostics::new();
        d.push(Diagnostic::warning("w"));
        assert!(d.check().is_ok());
        d.push(Diagnostic::error("b"));
        d.push(Diagnostic::error("a"));
        let all = d.check().unwrap_err();
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].message, "a");
        assert!(render_all(&all).ends_with("due to 2 previous errors\n"));
    }
}
