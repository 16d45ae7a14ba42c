"""HTML views of the reviewer's workspace. Plain functions; objects come through access helpers."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_GET


@require_GET
@login_required
def dashboard(request):
    return render(request, "review/dashboard.html", {"nav": "dashboard"})
