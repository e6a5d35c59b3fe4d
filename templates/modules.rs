//! {{ doc }}
{% for m in modules %}
pub mod {{ m }};
{%- endfor %}
{% for r in reexports %}
pub use {{ r }};
{%- endfor %}
