// /api/docs/: Swagger UI's markup, completed for assistive technology each time it renders.
// Its introduction (title, description) becomes the page's banner landmark, so every part of
// the page sits in a landmark, and its headings below the title's <h1> (which start at <h3>)
// are read one level up, so heading levels never skip one.
(() => {
  const complete = () => {
    const intro = document.querySelector("#swagger-ui .information-container");
    if (intro && intro.getAttribute("role") !== "banner") intro.setAttribute("role", "banner");
    document
      .querySelectorAll("#swagger-ui :is(h3, h4, h5, h6):not([aria-level])")
      .forEach((heading) => {
        heading.setAttribute("aria-level", String(Number(heading.tagName[1]) - 1));
      });
  };
  const root = document.getElementById("swagger-ui");
  if (!root) return;
  new MutationObserver(complete).observe(root, { childList: true, subtree: true });
  complete();
})();
