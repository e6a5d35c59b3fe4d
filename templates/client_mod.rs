{% if file_docs -%}
//! Generated clients for the API types of this crate: {% for m in children %}`{{ m.name }}`{% if !loop.last %}, {% endif %}{% endfor %}.
{%- endif %}
{% include "child_modules.rs" %}
