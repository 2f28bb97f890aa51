// Reading keeps your place: a story's buttons (Save, Mark read, More like this, Not
// interested, Undo) act in place, without reloading the page or moving it.
//
// The form is posted as it would be without this script (its form token and all);
// the page the server answers with (the feed, as after the redirect) is read, and
// only this story's card is swapped for the one in it. Without scripts, or if
// anything here fails, the form is submitted as usual and the server brings the
// reader back to the same card by its anchor.
"use strict";

document.addEventListener("submit", async (event) => {
  const form = event.target;
  const button = event.submitter;
  if (!(form instanceof HTMLFormElement) || !form.classList.contains("actions")) return;
  const card = form.closest("article[id]");
  if (!card || !button || !button.name) return;
  event.preventDefault();
  const body = new FormData(form);
  body.set(button.name, button.value);
  for (const control of form.querySelectorAll("button")) control.disabled = true;
  try {
    // form.action would be its buttons (named "action"): the attribute is the address.
    const address = form.getAttribute("action") || location.pathname;
    const answer = await fetch(address, { method: "POST", body, credentials: "same-origin" });
    if (!answer.ok) throw new Error(String(answer.status));
    const page = new DOMParser().parseFromString(await answer.text(), "text/html");
    const fresh = page.getElementById(card.id);
    if (fresh) {
      card.replaceWith(document.importNode(fresh, true));
      const again = document.getElementById(card.id)?.querySelector("button");
      if (again) again.focus({ preventScroll: true });
    } else {
      card.remove();
    }
  } catch (problem) {
    // As without scripts (the server brings the reader back here), the button's value too.
    const carried = document.createElement("input");
    carried.type = "hidden";
    carried.name = button.name;
    carried.value = button.value;
    form.append(carried);
    form.submit();
  }
});
