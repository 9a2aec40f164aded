"""The web console for people: static files (index.html, app.js, app.css, pages/) and the code that serves them."""
