//! {{ doc }}
{% include "child_modules.rs" %}
{% for (module, item) in reexports %}
pub use {{ module }}::{{ item }};
{%- endfor %}
