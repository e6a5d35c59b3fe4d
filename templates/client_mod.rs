//! Generated clients for the API types of this crate: {% for m in modules %}`{{ m }}`{% if !loop.last %}, {% endif %}{% endfor %}.
{% for m in modules %}
pub mod {{ m }};
{%- endfor %}
